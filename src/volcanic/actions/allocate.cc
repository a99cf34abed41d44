// allocate (reference §4.3, research §1): queue by queue (QueueOrder,
// skipping overused queues), job by job (JobOrder), task by task
// (TaskOrder), each task to the best node that fits Idle, else pipelined onto
// one that fits FutureIdle. A job's statement is committed once the job is
// ready, kept uncommitted while it is only pipelined, and discarded
// otherwise. A task whose only gate is Volcano's queue-allocation gate is
// tried too, only as far as its queue's Allocatable check: with the
// SchedulingGatesQueueAdmission feature gate on and the pod opted in, passing
// it decides the gate's removal (Volcano's allocate.go and
// gate/schedulinggate.go); the task is placed by a later session, once the
// pod's update without the gate has come.
#include <optional>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "volcanic/actions/actions.h"
#include "volcanic/actions/heap.h"
#include "volcanic/framework/node_search.h"
#include "volcanic/framework/session.h"
#include "volcanic/framework/statement.h"

namespace volcanic {
namespace {

// A job's pending tasks in TaskOrder, consumed front to back.
struct TaskList {
  std::vector<TaskInfo*> tasks;
  size_t next = 0;
  bool Empty() const { return next == tasks.size(); }
  TaskInfo* Pop() { return tasks[next++]; }
};

class AllocateAction : public Action {
 public:
  explicit AllocateAction(bool indexing) : indexing_(indexing) {}

  void Execute(Session& ssn) override {
    ssn.node_search().set_indexing(indexing_);
    OrderedHeap<const QueueInfo*> queues([&](auto a, auto b) { return ssn.QueueOrder(*a, *b); });
    absl::btree_map<std::string, OrderedHeap<JobInfo*>> jobs;
    absl::flat_hash_map<JobInfo*, TaskList> pending;
    bool enqueue_configured = ssn.conf().HasAction("enqueue");
    for (const auto& [key, job] : ssn.jobs()) {
      if (job->IsPending()) {
        if (enqueue_configured) continue;
        job->SetPhase("Inqueue");
      }
      // No pending task: nothing to place (the checks below would agree, at a cost per job).
      if (job->Count(Mask(TaskStatus::kPending)) == 0) continue;
      if (ssn.JobInvalid(*job)) continue;
      const QueueInfo* q = ssn.FindQueue(job->queue);
      if (!q) continue;
      TaskList list = PendingTasks(ssn, *job);
      if (list.Empty()) continue;
      pending.emplace(job, std::move(list));
      auto [it, created] = jobs.try_emplace(q->name, [&](JobInfo* a, JobInfo* b) { return ssn.JobOrder(*a, *b); });
      if (created) queues.Push(q);
      it->second.Push(job);
    }
    while (!queues.Empty()) {
      const QueueInfo* q = queues.Pop();
      if (ssn.Overused(*q)) continue;
      auto& queue_jobs = jobs.at(q->name);
      if (queue_jobs.Empty()) continue;
      JobInfo* job = queue_jobs.Pop();
      TaskList& tasks = pending.at(job);
      std::optional<Statement> stmt = AllocateTasks(ssn, *q, job, tasks);
      if (stmt && ssn.JobReady(*job)) {
        stmt->Commit();
        if (!tasks.Empty()) queue_jobs.Push(job);
      }
      queues.Push(q);
    }
  }

 private:
  static TaskList PendingTasks(Session& ssn, const JobInfo& job) {
    TaskList list;
    for (const auto& [key, t] : job.tasks)
      if (t->status == TaskStatus::kPending && !t->best_effort && (!t->gated || t->queue_gate_only))
        list.tasks.push_back(t);
    SortByOrder(list.tasks, [&](const TaskInfo* a, const TaskInfo* b) { return ssn.TaskOrder(*a, *b); });
    return list;
  }

  // The tasks of one job until it is ready; the statement if the job is
  // ready or pipelined, else nothing (and the statement is discarded).
  static std::optional<Statement> AllocateTasks(Session& ssn, const QueueInfo& q, JobInfo* job,
                                                TaskList& tasks) {
    Statement stmt(ssn);
    while (!tasks.Empty()) {
      TaskInfo* task = tasks.Pop();
      if (!ssn.Allocatable(q, *task)) {
        ssn.NoteSkipped(*task, absl::StrCat("Queue <", q.name, "> is overused when considering task <", task->name,
                                            ">, ignore it."));
        continue;
      }
      if (task->gated) {
        if (ssn.features().queue_allocation_gate && task->queue_gate_opt_in) ssn.Ungate(*task);
        continue;
      }
      if (const FitErrors* role_errors = ssn.RoleFitErrors(*task)) {
        // Volcano skips a role that already failed predicates; its reason is
        // the role's.
        ssn.SetFitErrors(*task, *role_errors);
        continue;
      }
      if (absl::Status pre = ssn.PrePredicate(*task); !pre.ok()) {
        FitErrors fe;
        for (size_t i = 0; i < ssn.nodes().size(); ++i) fe.AddNode({std::string(pre.message())});
        ssn.SetFitErrors(*task, std::move(fe));
        break;
      }
      FitErrors fe;
      NodeSearch::Result r = ssn.node_search().Find(*task, true, &fe);
      if (!r.node) {
        ssn.SetFitErrors(*task, std::move(fe));
        if (ssn.NeedContinueAllocating(*job)) continue;
        break;
      }
      if (r.fits_idle) {
        stmt.Allocate(task, r.node);
      } else {
        stmt.Pipeline(task, r.node);
      }
      if (ssn.JobReady(*job)) break;
    }
    if (ssn.JobReady(*job) || ssn.JobPipelined(*job)) return stmt;
    stmt.Discard();
    return std::nullopt;
  }

  bool indexing_;
};

}  // namespace

ActionOr NewAllocateAction(const Arguments& args) {
  if (auto s = args.CheckKnown({"predicateErrorCacheEnable", "volcanic.nodeIndex"}); !s.ok()) return s;
  if (auto v = args.Bool("predicateErrorCacheEnable", true); !v.ok()) return v.status();
  auto indexing = args.Bool("volcanic.nodeIndex", true);
  if (!indexing.ok()) return indexing.status();
  return std::make_unique<AllocateAction>(*indexing);
}

}  // namespace volcanic
