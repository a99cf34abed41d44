// What preempt and reclaim share (reference §4.3, §4.4): the nodes worth
// trying for a preemptor, the victims the plugins allow on one node, their
// eviction order, and the loop that evicts until the preemptor fits and then
// pipelines it. The two actions differ only in which tasks are candidates
// (a filter) and which plugin rule picks victims (Preemptable or Reclaimable).
//
// Cost: one try is O(tasks on the node + victims log victims) plus the
// plugins' victim functions; nodes are tried until one works.
#pragma once

#include <functional>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "volcanic/api/types.h"

namespace volcanic {

class Session;
class Statement;
struct SessionMetrics;

// The action's own rule for which tasks on a node are candidates.
using VictimFilter = std::function<bool(const TaskInfo&)>;
enum class VictimRule { kPreemptable, kReclaimable };

// A job's pending, ungated tasks in TaskOrder: who may preempt or reclaim.
std::vector<TaskInfo*> PendingPreemptors(const Session& ssn, const JobInfo& job);

// Nodes where evictions could make room for the task (Volcano's
// PredicateForPreemptAction: only unresolvable predicate failures exclude a
// node): by descending score when `by_score`, else by name.
std::vector<NodeInfo*> PreemptionNodes(Session& ssn, const TaskInfo& preemptor, bool by_score);

// Whether `preemptor` can run on `node` now: its queue may allocate it, it
// fits FutureIdle and every predicate passes.
bool FitsAfterEvictions(const Session& ssn, const TaskInfo& preemptor, const NodeInfo& node);

// The victims the plugins allow among the filtered tasks on `node`, in
// eviction order (Session::OrderVictims); empty when they cannot free enough
// for the preemptor with the node's FutureIdle (Volcano's ValidateVictims).
std::vector<TaskInfo*> AllowedVictims(Session& ssn, const TaskInfo& preemptor, const NodeInfo& node,
                                      const VictimFilter& filter, VictimRule rule);

// Where preempt counts its attempts and victims (Volcano's metrics count
// preempt's, not reclaim's); nullptr when not collected or for reclaim.
SessionMetrics* PreemptMetrics(Session& ssn, VictimRule rule);

// Makes room for `preemptor` on `node`: its AllowedVictims, evicted in order
// until the preemptor fits, which is then pipelined there.
// On success the evictions and the pipeline join `stmt` and true is
// returned; otherwise the session is as it was.
bool EvictAndPipeline(Session& ssn, Statement& stmt, TaskInfo* preemptor, NodeInfo* node,
                      const VictimFilter& filter, VictimRule rule);

// Preemptors of one job that are alike (same placement class, priority and
// preemption policy) get the same answer from the victim rules while the
// session is unchanged, so after one of them finds no room the rest are
// skipped until something changes. This keeps a saturated cluster from
// costing O(pending tasks x nodes): a gang's identical tasks are tried once.
class FailedPreemptors {
 public:
  bool KnownToFail(const Session& ssn, const TaskInfo& t) const;
  void Failed(const Session& ssn, const TaskInfo& t);

 private:
  using Kind = std::tuple<const JobInfo*, int32_t, int32_t, std::string>;
  absl::flat_hash_map<Kind, uint64_t> failed_at_;  // kind -> session changes() then
};

}  // namespace volcanic
