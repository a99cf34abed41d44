// Finding the node for a task, as allocate does (reference §4.3): nodes
// where the task fits Idle come first, then nodes where it fits only
// FutureIdle (pipelining); within a group the highest score wins and ties go
// to the first node by name (Volcano picks at random).
//
// Two ways, same answers:
//  - generic: every node is checked and scored for every task, O(nodes);
//  - indexed: when all predicates and scores are node-local for the task
//    (Session::NodeLocal), results are kept per task class in an ordered
//    index and refreshed only for nodes changed since the class last looked
//    (Cache::node_changes), so a placement costs O(log nodes) per class that
//    is used again. The nodes a class refreshes are scored in one NodeScores
//    batch, so a node-local batch score must not depend on the other nodes of
//    the batch. The indexes live in a Memory that a Scheduler keeps from one
//    session to the next while every plugin's answers outlive its session
//    (Plugin::AnswersOutliveSession) and the Ready nodes stay the same
//    (Cache::node_generation): a pod arriving alone then costs the nodes that
//    changed since its class last looked, not every node.
// Tests run both and compare.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "volcanic/api/types.h"
#include "volcanic/framework/fit_errors.h"

namespace volcanic {

class Session;

class NodeSearch {
  struct ClassIndex;

 public:
  // The class indexes and the interned reasons, kept across sessions.
  struct Memory {
    Memory();
    ~Memory();
    uint64_t generation = 0;  // the cache's node_generation the indexes are for
    // By class key, not id: a class whose pods are all gone (its id freed) is
    // found again when its next pod comes. Each holds O(nodes): at most
    // KeptClasses(), the least recently used going first.
    absl::flat_hash_map<std::string, std::unique_ptr<ClassIndex>> classes;
    uint64_t uses = 0;  // Index() calls: a class's last one orders eviction
    std::vector<std::string> reason_names;
    absl::flat_hash_map<std::string, int> reason_ids;
    std::vector<int> insufficient_ids;  // by resource id, -1 until interned
  };
  // `kept`: the Memory to use and keep (nullptr: this session's own).
  NodeSearch(Session& ssn, Memory* kept);
  ~NodeSearch();

  struct Result {
    NodeInfo* node = nullptr;  // nullptr: no node fits; see the errors
    bool fits_idle = false;
  };
  // With `resource_check` false (backfill's best-effort tasks) only the
  // plugins' predicates and a pod slot free now (node Idle) are checked, and
  // every fitting node counts as idle. `within`: only these nodes (a
  // HyperNode's), each checked; empty: every node.
  Result Find(const TaskInfo& task, bool resource_check, FitErrors* errors,
              absl::Span<NodeInfo* const> within = {});
  uint64_t changes() const { return change_log_.size(); }
  // Indices (in Session::nodes()) of the nodes whose accounting changed, in
  // order, repeats included: read from a cursor to catch up on changes.
  const std::vector<int>& changed_nodes() const { return change_log_; }
  // Turns the class index off (for tests and comparison).
  void set_indexing(bool on) { indexing_ = on; }

 private:
  // Node evaluations kept over all classes (about 50 bytes each), and the
  // classes kept however many nodes there are.
  static constexpr size_t kKeptEvaluations = size_t{1} << 19;
  static constexpr size_t kMinKeptClasses = 64;
  size_t KeptClasses() const;
  enum Fit { kNoFit = -1, kFitIdle = 0, kFitFuture = 1 };

  // On a failed resource check *short_of is the resource (reasons are left
  // alone); on a failed predicate the plugins' reasons are appended.
  Fit Evaluate(const TaskInfo& task, const NodeInfo& node, bool resource_check, ResourceId* short_of,
               std::vector<std::string>* reasons) const;
  // "Insufficient <resource>", interned once per resource.
  int InsufficientReasonId(ResourceId r);
  Result FindGeneric(const TaskInfo& task, bool resource_check, absl::Span<NodeInfo* const> nodes,
                     FitErrors* errors);
  Result FindIndexed(const TaskInfo& task, FitErrors* errors);
  ClassIndex& Index(const TaskInfo& task);
  void Refresh(ClassIndex& ci, const TaskInfo& task, const std::vector<int>& node_indices);
  int ReasonId(const std::string& reason);

  Session& ssn_;
  bool indexing_ = true;
  std::unique_ptr<Memory> own_;
  Memory& m_;
  const std::vector<int>& change_log_;  // the cache's: node indices, in change order
  std::vector<std::string> scratch_reasons_;
  std::vector<double> scratch_scores_;
  std::vector<int> scratch_indices_, scratch_fitting_;
  std::vector<NodeInfo*> scratch_fit_nodes_;
};

}  // namespace volcanic
