// A session's view of network topology (Volcano's openSession:
// adjustNetworkTopologySpec and recoverAllocatedHyperNode), over the cache's
// HyperNodeTree.
//
// Rules (research notes, Volcano v1.15.1 framework/session.go):
//  - a highestTierName is turned into its tier; a name no HyperNode has leaves
//    the gang without a limit;
//  - soft mode is hard up to the top's tier (a sub-group's soft: up to its
//    job's limit), so soft gangs take the same lowest-tier-first search;
//  - hard without a tier (or mode "") is no limit;
//  - a gang's allocated HyperNode is the lowest-tier one holding all its
//    placed pods. Volcano keeps it in memory and recovers it so after a
//    restart; volcanic recovers it at every session, which gives the same
//    HyperNode (the search only looks at its ancestor at the limit).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "volcanic/api/types.h"
#include "volcanic/cache/hypernode_tree.h"

namespace volcanic {

struct TopologyLimit {
  bool hard = false;          // Volcano's IsHardTopologyMode, after the rules above
  int32_t highest_tier = 0;   // meaningful when hard
};

// A gang that network topology places: a job as a whole, or one of its
// gangs (Volcano's SubJobInfo): the pods of one subGroupPolicy with the same
// values of its matchLabelKeys, or the job's other pods (its default gang).
struct TopologyUnit {
  const JobInfo* job = nullptr;
  std::string id;     // Volcano's SubJobID: "<ns>/<job>/<policy>-<values>", "<ns>/<job>" for the default
  std::string group;  // its policy's name; "" for the default gang
  int match_index = 0;           // the first matched value as a number (0 if not one): the gang order
  int32_t min_available = 0;     // subGroupSize; the default gang: the job's minMember, or 1 beside policies
  std::vector<TaskInfo*> tasks;  // all its tasks, placed or not
  bool with_topology = false;    // a networkTopology is given (any mode)
  TopologyLimit limit;
  int allocated = HyperNodeTree::kNone;  // Volcano's AllocatedHyperNode
  Resource min_resource;                 // what the gradient's resource pre-filter asks

  int Count(uint16_t mask) const;
  // Volcano's SubJobInfo.IsReady and IsPipelined: placed (and pipelined)
  // pods, plus pending best-effort ones, reach min_available.
  bool Ready() const;
  bool Pipelined() const;
};

// A job's gangs as one session sees them.
struct JobGangs {
  TopologyUnit whole;               // the job (its gradient: the PodGroup's minResources)
  std::vector<TopologyUnit> gangs;  // by id
  absl::flat_hash_map<const TaskInfo*, int> gang_of;  // task -> index in gangs
  absl::btree_map<std::string, int32_t> min_gangs;  // policy -> minSubGroups (those above 0)
  bool policies = false;            // the PodGroup has a subGroupPolicy
  // Volcano's ContainsHardTopology: the gradient search places it.
  bool hard() const;
};

class SessionTopology {
 public:
  explicit SessionTopology(const HyperNodeTree& tree) : tree_(tree) {}

  const HyperNodeTree& tree() const { return tree_; }
  TopologyLimit Limit(const std::optional<NetworkTopology>& nt, const std::optional<TopologyLimit>& parent) const;
  // The job's gangs, built once a session (their pods do not change while it
  // runs; their statuses are read live) with their allocated HyperNodes
  // recovered from where their pods are.
  JobGangs& GangsOf(const JobInfo& job);
  // The lowest-tier HyperNode holding every node of the tasks, kNone when a
  // task is on no Ready node or none is placed.
  int Recover(const std::vector<TaskInfo*>& placed) const;
  // The gang a task is being placed with, so far (Volcano's
  // TaskInfo.JobAllocatedHyperNode), set by allocate before it scores nodes.
  void SetPlacing(const TaskInfo* t, int hypernode) { placing_[t] = hypernode; }
  // kNone when the task is not placed with a topology gang.
  int Placing(const TaskInfo& t) const;
  bool WithTopology(const TaskInfo& t) const { return placing_.contains(&t); }

 private:
  JobGangs Build(const JobInfo& job) const;

  const HyperNodeTree& tree_;
  absl::flat_hash_map<const TaskInfo*, int> placing_;
  absl::flat_hash_map<const JobInfo*, std::unique_ptr<JobGangs>> gangs_;
};

}  // namespace volcanic
