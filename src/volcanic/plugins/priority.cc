// priority (reference §4.6): higher task priority first, higher job
// priority first; only lower-priority work is preempted (a lower job
// priority between jobs, a lower task priority within a job); a job starves
// while some of its tasks are neither ready nor pipelined.
#include "volcanic/framework/session.h"
#include "volcanic/plugins/plugins.h"

namespace volcanic {
namespace {

template <typename T>
int HigherFirst(const T& l, const T& r) {
  if (l.priority == r.priority) return 0;
  return l.priority > r.priority ? -1 : 1;
}

class PriorityPlugin : public Plugin {
 public:
  void OnSessionOpen(PluginHandle& h) override {
    h.AddTaskOrderFn(HigherFirst<TaskInfo>);
    h.AddJobOrderFn(HigherFirst<JobInfo>);
    h.AddPreemptableFn([](const TaskInfo& preemptor, const std::vector<TaskInfo*>& candidates) {
      std::vector<TaskInfo*> victims;
      for (TaskInfo* t : candidates) {
        bool lower = t->job == preemptor.job ? t->priority < preemptor.priority
                                             : t->job->priority < preemptor.job->priority;
        if (lower) victims.push_back(t);
      }
      return std::optional<std::vector<TaskInfo*>>(std::move(victims));
    });
    // gangpreempt: only jobs of a lower priority; gangreclaim takes from
    // other queues by fairness, whatever the priority (as Volcano's).
    h.AddUnifiedEvictableFn([](const EvictionContext& ctx, const std::vector<TaskInfo*>& candidates) {
      if (ctx.kind == EvictionKind::kGangReclaim) return std::optional<std::vector<TaskInfo*>>(candidates);
      std::vector<TaskInfo*> victims;
      for (TaskInfo* t : candidates)
        if (t->job->priority < ctx.job->priority) victims.push_back(t);
      return std::optional<std::vector<TaskInfo*>>(std::move(victims));
    });
    h.AddJobStarvingFn([](const JobInfo& job) {
      return job.ReadyTaskNum() + job.WaitingTaskNum() < static_cast<int>(job.tasks.size());
    });
  }
};

}  // namespace

PluginOr NewPriorityPlugin(const Arguments& args) {
  if (auto s = args.CheckKnown({}); !s.ok()) return s;
  return std::make_unique<PriorityPlugin>();
}

}  // namespace volcanic
