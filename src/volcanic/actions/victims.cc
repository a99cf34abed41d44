#include "volcanic/actions/victims.h"

#include <algorithm>
#include <numeric>

#include "volcanic/framework/heap.h"
#include "volcanic/cache/cache.h"
#include "volcanic/framework/session.h"
#include "volcanic/framework/statement.h"

namespace volcanic {

std::vector<TaskInfo*> PendingPreemptors(const Session& ssn, const JobInfo& job) {
  std::vector<TaskInfo*> tasks;
  for (const auto& [key, t] : job.tasks)
    if (t->status == TaskStatus::kPending && !t->gated) tasks.push_back(t);
  SortByOrder(tasks, [&](auto a, auto b) { return ssn.TaskOrder(*a, *b); });
  return tasks;
}

std::vector<NodeInfo*> PreemptionNodes(Session& ssn, const TaskInfo& preemptor, bool by_score) {
  std::vector<NodeInfo*> nodes;
  for (NodeInfo* n : ssn.nodes())
    if (ssn.PredicateForPreempt(preemptor, *n)) nodes.push_back(n);
  if (!by_score || nodes.size() < 2 || !ssn.HasNodeOrder()) return nodes;
  std::vector<double> scores;
  ssn.NodeScores(preemptor, nodes, &scores);
  std::vector<size_t> order(nodes.size());
  std::iota(order.begin(), order.end(), 0);
  // Highest score first; ties keep name order (Volcano picks at random).
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  std::vector<NodeInfo*> sorted;
  sorted.reserve(nodes.size());
  for (size_t i : order) sorted.push_back(nodes[i]);
  return sorted;
}

bool FitsAfterEvictions(const Session& ssn, const TaskInfo& preemptor, const NodeInfo& node) {
  const QueueInfo* q = ssn.FindQueue(preemptor.job->queue);
  if (!q || !ssn.Allocatable(*q, preemptor)) return false;
  ResourceId short_of;
  if (!node.FitsFutureIdle(preemptor.resreq, &short_of)) return false;
  std::vector<std::string> reasons;
  return ssn.Predicate(preemptor, node, &reasons);
}

namespace {

// Volcano's ValidateVictims: some victims, and together with FutureIdle
// they cover the request.
bool FreesEnough(const TaskInfo& preemptor, const NodeInfo& node, const std::vector<TaskInfo*>& victims) {
  if (victims.empty()) return false;
  Resource future = node.FutureIdle();
  for (const TaskInfo* v : victims) future += v->resreq;
  return preemptor.resreq.LessEqual(future);
}

std::vector<TaskInfo*> Candidates(const NodeInfo& node, const VictimFilter& filter) {
  std::vector<TaskInfo*> out;
  for (const auto& [key, t] : node.tasks)
    // Only tasks of jobs in the session can be weighed by the plugins.
    if (t->job && Cache::Schedulable(*t->job) && filter(*t)) out.push_back(t);
  return out;
}

}  // namespace

std::vector<TaskInfo*> AllowedVictims(Session& ssn, const TaskInfo& preemptor, const NodeInfo& node,
                                      const VictimFilter& filter, VictimRule rule) {
  std::vector<TaskInfo*> candidates = Candidates(node, filter);
  if (candidates.empty()) return {};
  std::vector<TaskInfo*> victims = rule == VictimRule::kPreemptable ? ssn.Preemptable(preemptor, candidates)
                                                                    : ssn.Reclaimable(preemptor, candidates);
  if (SessionMetrics* m = PreemptMetrics(ssn, rule)) m->preemption_victims.push_back(static_cast<int>(victims.size()));
  if (!FreesEnough(preemptor, node, victims)) return {};
  ssn.OrderVictims(preemptor, &victims);
  return victims;
}

SessionMetrics* PreemptMetrics(Session& ssn, VictimRule rule) {
  return rule == VictimRule::kPreemptable ? ssn.metrics() : nullptr;
}

bool EvictAndPipeline(Session& ssn, Statement& stmt, TaskInfo* preemptor, NodeInfo* node,
                      const VictimFilter& filter, VictimRule rule) {
  std::vector<TaskInfo*> victims = AllowedVictims(ssn, *preemptor, *node, filter, rule);
  if (victims.empty()) return false;
  if (SessionMetrics* m = PreemptMetrics(ssn, rule)) ++m->preemption_attempts;
  Statement trial(ssn);
  for (TaskInfo* victim : victims) {
    if (FitsAfterEvictions(ssn, *preemptor, *node)) break;
    trial.Evict(victim);
  }
  // A plugin may refuse the pipeline: then no eviction either (Volcano's
  // preempt and reclaim discard the node's statement and try the next node).
  if (!FitsAfterEvictions(ssn, *preemptor, *node) || !trial.Pipeline(preemptor, node).ok()) {
    trial.Discard();
    return false;
  }
  stmt.Merge(trial);
  return true;
}

bool FailedPreemptors::KnownToFail(const Session& ssn, const TaskInfo& t) const {
  if (t.class_id < 0) return false;
  auto it = failed_at_.find(Kind{t.job, t.class_id, t.priority, t.preemption_policy});
  return it != failed_at_.end() && it->second == ssn.changes();
}

void FailedPreemptors::Failed(const Session& ssn, const TaskInfo& t) {
  if (t.class_id >= 0) failed_at_[Kind{t.job, t.class_id, t.priority, t.preemption_policy}] = ssn.changes();
}

}  // namespace volcanic
