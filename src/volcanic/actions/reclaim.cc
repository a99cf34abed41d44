// reclaim (reference §4.3): a starving job takes resources back from other
// queues. Queues are taken in QueueOrder (overused ones skipped), one job and
// one task at a time, round-robin as in Volcano. A task whose queue is
// Preemptive may evict Running preemptable tasks of jobs in other,
// reclaimable queues (victims by the Reclaimable rule, in victim-queue
// order) until it fits, and is pipelined there. A job's evictions are
// committed once the job is pipelined, and discarded at the end otherwise.
#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "volcanic/actions/actions.h"
#include "volcanic/actions/heap.h"
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
    absl::flat_hash_map<JobInfo*, Work> work;
    for (const auto& [key, job] : ssn.jobs()) {
      if (job->IsPending() || ssn.JobInvalid(*job)) continue;
      const QueueInfo* q = ssn.FindQueue(job->queue);
      if (!q) continue;
      auto [it, created] = jobs.try_emplace(q->name, [&](JobInfo* a, JobInfo* b) { return ssn.JobOrder(*a, *b); });
      if (created) queues.Push(q);
      if (!ssn.JobStarving(*job)) continue;
      it->second.Push(job);
      work.emplace(job, Work{PendingTasks(ssn, *job), 0, std::make_unique<Statement>(ssn)});
    }
    while (!queues.Empty()) {
      const QueueInfo* q = queues.Pop();
      if (ssn.Overused(*q)) continue;
      OrderedHeap<JobInfo*>& queue_jobs = jobs.at(q->name);
      if (queue_jobs.Empty()) continue;
      JobInfo* job = queue_jobs.Pop();
      Work& w = work.at(job);
      // A job popped here and not pushed back is done; its queue goes on
      // with its other jobs (Volcano drops the queue when a job is done).
      if (w.next < w.tasks.size() && ssn.JobStarving(*job) && Reclaim(ssn, *q, *w.stmt, w.tasks[w.next++])) {
        if (ssn.JobPipelined(*job)) w.stmt->Commit();
        queue_jobs.Push(job);
      }
      queues.Push(q);
    }
    // Evictions of jobs that never became pipelined are given back.
    for (const auto& [key, job] : ssn.jobs())
      if (auto it = work.find(job); it != work.end()) it->second.stmt->Discard();
  }

 private:
  struct Work {
    std::vector<TaskInfo*> tasks;  // pending, in TaskOrder
    size_t next = 0;
    std::unique_ptr<Statement> stmt;
  };

  static std::vector<TaskInfo*> PendingTasks(Session& ssn, const JobInfo& job) {
    std::vector<TaskInfo*> tasks;
    for (const auto& [key, t] : job.tasks)
      if (t->status == TaskStatus::kPending && !t->gated) tasks.push_back(t);
    std::sort(tasks.begin(), tasks.end(), [&](auto a, auto b) { return ssn.TaskOrder(*a, *b); });
    return tasks;
  }

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
};

}  // namespace

ActionOr NewReclaimAction(const Arguments& args) {
  if (auto s = args.CheckKnown({}); !s.ok()) return s;
  return std::make_unique<ReclaimAction>();
}

}  // namespace volcanic
