// The hierarchical DRF tree of drf with enableHierarchy (reference §4.6,
// Volcano's drf.go: buildHierarchy, updateHierarchicalShare, compareQueues).
//
// A queue's annotation volcano.sh/hierarchy ("root/eng/prod") names its path
// and volcano.sh/hierarchy-weights ("1/2/8") the weight of each node on it;
// the first segment always stands for the root. Jobs are leaves under their
// queue's last node. Each node has a dominant share of the cluster:
//  - a leaf: its job's allocation over the cluster total;
//  - an inner node: the sum of its children's allocations, each non-empty,
//    unsaturated child rescaled to the smallest such child's share (so a
//    node is as far along as its least-served demanding child), saturated
//    children counted as they are.
// A leaf is saturated once it holds all it asks of some resource, or holds a
// resource nobody can get more of (fully allocated cluster-wide); an inner
// node once all its children are. Queues compare node by node down their
// paths: unsaturated before saturated, then lower share/weight first.
//
// Cost: building is O(jobs x depth); an allocation or release recomputes
// its leaf's ancestors, O(depth x children per ancestor), or the whole tree
// when a resource becomes fully allocated or stops being so. Compare is
// O(depth) and allocates nothing.
// Bad input (as Volcano reads it): a missing or unparsable weight, or one
// below 1, counts as 1; a queue without the annotation hangs its jobs off the
// root and ties with every queue; a queue path no job has reached compares
// as an empty, unsaturated node.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "volcanic/api/types.h"

namespace volcanic {

class HdrfTree {
 public:
  explicit HdrfTree(Resource total);
  ~HdrfTree();
  HdrfTree(const HdrfTree&) = delete;
  HdrfTree& operator=(const HdrfTree&) = delete;

  // Hangs `job` (its allocation and total request as they are now) under the
  // path of `queue`, creating the path's nodes on first sight: a node's
  // weight comes from the first call that names it.
  void AddJob(const JobInfo& job, const QueueInfo& queue);
  // After the AddJob calls: computes every node and resolves the paths of
  // `queues` for Compare.
  void Finish(const absl::btree_map<std::string, const QueueInfo*>& queues);
  bool Has(const JobInfo& job) const { return leaves_.contains(&job); }
  // Adds (sign > 0) or takes away `req` from the job's leaf and from the
  // cluster's allocated total, then recomputes what depends on it. No-op
  // for a job not in the tree.
  void Adjust(const JobInfo& job, const Resource& req, int sign);
  // Volcano's compareQueues: < 0 when l goes first, 0 for a tie.
  int Compare(const QueueInfo& l, const QueueInfo& r) const;

  // A node as tests and logs see it; path as in the annotation ("root/eng").
  struct NodeState {
    double share = 0, weight = 1;
    bool saturated = false;
  };
  std::optional<NodeState> Find(absl::string_view path) const;

 private:
  struct Node;
  using Path = std::vector<const Node*>;  // root first; nullptr where no node exists
  Node* Child(Node* parent, const std::string& segment, double weight);
  Path Resolve(const std::string& hierarchy) const;
  const Path& PathOf(const QueueInfo& q, Path* scratch) const;
  std::vector<bool> Demanding() const;
  void UpdateLeaf(Node* leaf);
  void UpdateInner(Node* node);
  void UpdateAll(Node* node);

  Resource total_, total_allocated_;
  std::vector<bool> demanding_;  // by resource id: the cluster has some left
  std::unique_ptr<Node> root_;
  absl::flat_hash_map<const JobInfo*, Node*> leaves_;
  absl::flat_hash_map<std::string, Path> paths_;  // queue name -> its path
};

}  // namespace volcanic
