// backfill (reference §4.3): best-effort (request-free) pending tasks of
// running jobs, placed on any node the predicates allow, bound as soon as
// their job is ready.
#include "volcanic/actions/actions.h"
#include "volcanic/framework/heap.h"
#include "volcanic/framework/node_search.h"
#include "volcanic/framework/session.h"

namespace volcanic {
namespace {

class BackfillAction : public Action {
 public:
  void Execute(Session& ssn) override {
    std::vector<JobInfo*> jobs;
    for (const auto& [key, job] : ssn.jobs())
      if (job->pending_best_effort > 0 && !job->IsPending() && !ssn.JobInvalid(*job)) jobs.push_back(job);
    SortByOrder(jobs, [&](JobInfo* a, JobInfo* b) { return ssn.JobOrder(*a, *b); });
    for (JobInfo* job : jobs) {
      std::vector<TaskInfo*> tasks;
      for (const auto& [key, t] : job->tasks)
        if (t->status == TaskStatus::kPending && t->best_effort && !t->gated) tasks.push_back(t);
      SortByOrder(tasks, [&](TaskInfo* a, TaskInfo* b) { return ssn.TaskOrder(*a, *b); });
      for (TaskInfo* task : tasks) {
        if (absl::Status pre = ssn.PrePredicate(*task); !pre.ok()) continue;
        FitErrors fe;
        NodeSearch::Result r = ssn.node_search().Find(*task, false, &fe);
        if (!r.node) {
          ssn.SetFitErrors(*task, std::move(fe));
          continue;
        }
        ssn.AllocateAndDispatch(task, r.node);
      }
    }
  }
};

}  // namespace

ActionOr NewBackfillAction(const Arguments& args) {
  if (auto s = args.CheckKnown({}); !s.ok()) return s;
  return std::make_unique<BackfillAction>();
}

}  // namespace volcanic
