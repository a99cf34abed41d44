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
// pod's update without the gate has come. A job with a network topology
// goes through allocate_topology.h when its gang has a hard limit (soft ones
// too: the session makes them hard), and is left alone while the HyperNodes
// are not ready (a cycle, a HyperNode with two parents).
#include <optional>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "volcanic/actions/actions.h"
#include "volcanic/actions/allocate_topology.h"
#include "volcanic/framework/heap.h"
#include "volcanic/framework/node_search.h"
#include "volcanic/framework/session.h"
#include "volcanic/framework/statement.h"

namespace volcanic {
namespace {

class AllocateAction : public Action {
 public:
  explicit AllocateAction(bool indexing) : indexing_(indexing) {}

  void Execute(Session& ssn) override {
    ssn.node_search().set_indexing(indexing_);
    OrderedHeap<const QueueInfo*> queues([&](auto a, auto b) { return ssn.QueueOrder(*a, *b); });
    absl::btree_map<std::string, OrderedHeap<JobInfo*>> jobs;
    absl::flat_hash_map<JobInfo*, Work> pending;
    bool enqueue_configured = ssn.conf().HasAction("enqueue");
    for (const auto& [key, job] : ssn.jobs()) {
      if (job->IsPending()) {
        if (enqueue_configured || !ssn.QueueBindingsAdmit(*job)) continue;
        ssn.SetInqueue(*job);
      }
      // No pending task: nothing to place (the checks below would agree, at a cost per job).
      if (job->Count(Mask(TaskStatus::kPending)) == 0) continue;
      if (ssn.JobInvalid(*job)) continue;
      const QueueInfo* q = ssn.FindQueue(job->queue);
      if (!q) continue;
      std::optional<Work> work = WorkOf(ssn, *job);
      if (!work) continue;
      pending.emplace(job, std::move(*work));
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
      Work& work = pending.at(job);
      if (Allocate(ssn, *q, job, work) && !work.Empty()) queue_jobs.Push(job);
      queues.Push(q);
    }
  }

 private:
  // A job's pending tasks: in one list, or, for a job placed by topology
  // (allocate_topology.h), in its gangs' worksheet.
  struct Work {
    TaskList tasks;
    JobGangs* gangs = nullptr;  // a job with a network topology or gangs of its own
    std::optional<Worksheet> worksheet;
    bool Empty() const { return worksheet ? worksheet->Empty() : tasks.Empty(); }
  };

  static std::optional<Work> WorkOf(Session& ssn, const JobInfo& job) {
    Work work;
    if (job.network_topology || !job.sub_group_policies.empty()) {
      if (!ssn.topology().tree().ready()) return std::nullopt;
      work.gangs = &ssn.topology().GangsOf(job);
      if (work.gangs->hard() || work.gangs->policies) work.worksheet = WorksheetOf(ssn, job, *work.gangs);
    }
    if (!work.worksheet) {
      std::vector<TaskInfo*> all;
      for (const auto& [key, t] : job.tasks) all.push_back(t);
      work.tasks = PendingTasks(ssn, all);
    }
    if (work.Empty()) return std::nullopt;
    return work;
  }

  // One round of the job; whether it committed.
  static bool Allocate(Session& ssn, const QueueInfo& q, JobInfo* job, Work& work) {
    if (work.worksheet) {
      std::optional<TopologyPlacement> placed = AllocateInTopology(ssn, q, job, *work.worksheet, *work.gangs);
      if (!placed || !ssn.JobReady(*job)) return false;
      placed->stmt.Commit();
      placed->Decided(*work.gangs, ssn.topology().tree());
      return true;
    }
    TopologyUnit* gang = work.gangs && !work.gangs->gangs.empty() ? &work.gangs->gangs.front() : nullptr;
    std::optional<Statement> stmt = AllocateTasks(ssn, q, job, work.tasks, {{}, gang});
    if (!stmt || !ssn.JobReady(*job)) return false;
    stmt->Commit();
    return true;
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
