// preempt (reference §4.3): starving jobs take resources from lower-priority
// work of their own queue. Phase 1, between jobs: per queue, the starving
// jobs in JobOrder each evict Bound or Running preemptable tasks of other
// jobs of the queue (victims by the Preemptable rule) and pipeline their
// pending tasks; a job's statement is committed only if the job is then
// pipelined. Phase 2, within a job: a starving job's pending tasks may evict
// its own lower-priority tasks, committed task by task.
//
// Deterministic where Volcano is not: queues are taken in QueueOrder (Volcano
// walks a map), and phase 2 runs for the starving jobs of each queue right
// after that queue's phase 1 (Volcano runs it for every starving job after
// each queue). Phase 2 also spares tasks labelled non-preemptable (Volcano's
// phase 2 ignores the label). Nominated nodes are not modelled.
#include "absl/container/btree_map.h"
#include "volcanic/actions/actions.h"
#include "volcanic/framework/heap.h"
#include "volcanic/actions/preempt_candidates.h"
#include "volcanic/actions/victims.h"
#include "volcanic/api/errors.h"
#include "volcanic/framework/session.h"
#include "volcanic/framework/statement.h"

namespace volcanic {
namespace {

class PreemptAction : public Action {
 public:
  explicit PreemptAction(CandidateSearch search) : search_(search) {}

  void Execute(Session& ssn) override {
    absl::btree_map<std::string, std::vector<JobInfo*>> starving;  // by queue
    for (const auto& [key, job] : ssn.jobs()) {
      if (job->IsPending() || ssn.JobInvalid(*job) || !ssn.FindQueue(job->queue)) continue;
      if (ssn.JobStarving(*job)) starving[job->queue].push_back(job);
    }
    std::vector<const QueueInfo*> queues;
    for (const auto& [name, jobs] : starving) queues.push_back(ssn.FindQueue(name));
    SortByOrder(queues, [&](auto a, auto b) { return ssn.QueueOrder(*a, *b); });
    for (const QueueInfo* q : queues) {
      BetweenJobs(ssn, starving[q->name]);
      failed_ = FailedPreemptors();  // phase 2 offers other victims
      for (JobInfo* job : starving[q->name]) WithinJob(ssn, job);
    }
  }

 private:
  // Tries the task on every candidate node until one works.
  bool Preempt(Session& ssn, Statement& stmt, TaskInfo* preemptor, const VictimFilter& filter) {
    if (preemptor->preemption_policy == "Never") return false;
    if (failed_.KnownToFail(ssn, *preemptor) || !ssn.PrePredicate(*preemptor).ok()) return false;
    if (PreemptOnSomeNode(ssn, stmt, preemptor, filter)) return true;
    failed_.Failed(ssn, *preemptor);
    return false;
  }

  bool PreemptOnSomeNode(Session& ssn, Statement& stmt, TaskInfo* preemptor, const VictimFilter& filter) {
    if (search_.enabled)
      return PreemptOnBestCandidate(ssn, stmt, preemptor, PreemptionNodes(ssn, *preemptor, false), filter, search_);
    for (NodeInfo* node : PreemptionNodes(ssn, *preemptor, true))
      if (EvictAndPipeline(ssn, stmt, preemptor, node, filter, VictimRule::kPreemptable)) return true;
    return false;
  }

  void BetweenJobs(Session& ssn, const std::vector<JobInfo*>& starving) {
    OrderedHeap<JobInfo*> jobs([&](JobInfo* a, JobInfo* b) { return ssn.JobOrder(*a, *b); });
    absl::flat_hash_map<JobInfo*, std::vector<TaskInfo*>> tasks;
    for (JobInfo* job : starving) {
      jobs.Push(job);
      tasks[job] = PendingPreemptors(ssn, *job);
    }
    absl::flat_hash_map<JobInfo*, size_t> next;
    while (!jobs.Empty()) {
      JobInfo* job = jobs.Pop();
      Statement stmt(ssn);
      bool assigned = false;
      std::vector<TaskInfo*>& pending = tasks[job];
      size_t& i = next[job];
      while (ssn.JobStarving(*job) && i < pending.size()) {
        TaskInfo* preemptor = pending[i++];
        auto filter = [&](const TaskInfo& t) {
          if (!In(t.status, kPreemptableMask) || !t.preemptable) return false;
          if (preemptor->best_effort && !t.best_effort) return false;
          return t.job != job && t.job->queue == job->queue;
        };
        assigned |= Preempt(ssn, stmt, preemptor, filter);
      }
      if (!ssn.JobPipelined(*job)) {
        stmt.Discard();
        continue;
      }
      stmt.Commit();
      if (assigned) jobs.Push(job);
    }
  }

  void WithinJob(Session& ssn, JobInfo* job) {
    for (TaskInfo* preemptor : PendingPreemptors(ssn, *job)) {
      auto filter = [&](const TaskInfo& t) {
        if (!In(t.status, kPreemptableMask) || !t.preemptable) return false;
        if (preemptor->best_effort && !t.best_effort) return false;
        return t.job == job;
      };
      Statement stmt(ssn);
      bool assigned = Preempt(ssn, stmt, preemptor, filter);
      stmt.Commit();
      if (!assigned) break;
    }
  }

  CandidateSearch search_;
  FailedPreemptors failed_;
};

}  // namespace

ActionOr NewPreemptAction(const Arguments& args) {
  if (auto s = args.CheckKnown({"enableTopologyAwarePreemption", "topologyAwarePreemptWorkerNum",
                                "minCandidateNodesPercentage", "minCandidateNodesAbsolute",
                                "maxCandidateNodesAbsolute", "predicateErrorCacheEnable"});
      !s.ok())
    return s;
  auto search = CandidateSearch::FromArguments(args);
  if (!search.ok()) return search.status();
  return std::make_unique<PreemptAction>(*search);
}

}  // namespace volcanic
