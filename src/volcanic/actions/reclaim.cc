// reclaim (reference §4.3): a starving job takes resources back from other
// queues. Queues are taken in QueueOrder (overused ones skipped), one job of
// the queue at a time in JobOrder. While the job starves, each of its pending
// tasks in TaskOrder whose queue is Preemptive may evict Running preemptable
// tasks of jobs in other, reclaimable queues (victims by the Reclaimable
// rule, in victim-queue order) until it fits, and is pipelined there; a task
// that cannot is skipped. The job's evictions are committed if the job is
// then pipelined, and given back otherwise.
#include "absl/container/btree_map.h"
#include "volcanic/actions/actions.h"
#include "volcanic/framework/heap.h"
#include "volcanic/actions/victims.h"
#include "volcanic/framework/session.h"
#include "volcanic/framework/statement.h"

namespace volcanic {
namespace {

class ReclaimAction : public Action {
 public:
  void Execute(Session& ssn) override {
    OrderedHeap<const QueueInfo*> queues([&](auto a, auto b) { return ssn.QueueOrder(*a, *b); });
    absl::btree_map<std::string, OrderedHeap<JobInfo*>> jobs;  // starving jobs by queue
    for (const auto& [key, job] : ssn.jobs()) {
      if (job->IsPending() || ssn.JobInvalid(*job)) continue;
      const QueueInfo* q = ssn.FindQueue(job->queue);
      if (!q) continue;
      auto [it, created] = jobs.try_emplace(q->name, [&](JobInfo* a, JobInfo* b) { return ssn.JobOrder(*a, *b); });
      if (created) queues.Push(q);
      if (ssn.JobStarving(*job)) it->second.Push(job);
    }
    while (!queues.Empty()) {
      const QueueInfo* q = queues.Pop();
      if (ssn.Overused(*q)) continue;
      OrderedHeap<JobInfo*>& queue_jobs = jobs.at(q->name);
      if (queue_jobs.Empty()) continue;
      JobInfo* job = queue_jobs.Pop();
      Statement stmt(ssn);
      for (TaskInfo* task : PendingPreemptors(ssn, *job)) {
        if (!ssn.JobStarving(*job)) break;
        if (failed_.KnownToFail(ssn, *task)) continue;
        if (!Reclaim(ssn, *q, stmt, task)) failed_.Failed(ssn, *task);
      }
      if (ssn.JobPipelined(*job)) {
        stmt.Commit();
      } else {
        stmt.Discard();
      }
      queues.Push(q);
    }
  }

 private:
  static bool Reclaim(Session& ssn, const QueueInfo& q, Statement& stmt, TaskInfo* task) {
    if (task->preemption_policy == "Never" || !ssn.Preemptive(q, *task)) return false;
    if (!ssn.PrePredicate(*task).ok()) return false;
    auto filter = [&](const TaskInfo& t) {
      if (t.status != TaskStatus::kRunning || !t.preemptable || t.job->queue == q.name) return false;
      const QueueInfo* victim_queue = ssn.FindQueue(t.job->queue);
      return victim_queue && victim_queue->reclaimable;
    };
    for (NodeInfo* node : PreemptionNodes(ssn, *task, false))
      if (EvictAndPipeline(ssn, stmt, task, node, filter, VictimRule::kReclaimable)) return true;
    return false;
  }

  FailedPreemptors failed_;
};

}  // namespace

ActionOr NewReclaimAction(const Arguments& args) {
  if (auto s = args.CheckKnown({}); !s.ok()) return s;
  return std::make_unique<ReclaimAction>();
}

}  // namespace volcanic
