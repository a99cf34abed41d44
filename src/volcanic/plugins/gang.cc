// gang (reference §4.6, Volcano's gang.go and job_info.go): a job runs only
// when MinAvailable tasks (and each role's minTaskMember) can run together,
// and is never preempted or reclaimed below MinAvailable.
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "volcanic/framework/session.h"
#include "volcanic/framework/tiers.h"
#include "volcanic/plugins/plugins.h"

namespace volcanic {
namespace {

int MinTaskTotal(const JobInfo& job) {
  int total = 0;
  for (const auto& [role, n] : job.min_task_member) total += n;
  return total;
}

// Every role with a minimum has at least that many tasks in `mask` (plus
// pending best-effort tasks when `best_effort`). Skipped, as in Volcano,
// when minAvailable is below the sum of the role minimums.
bool RolesMeet(const JobInfo& job, uint16_t mask, bool best_effort) {
  if (job.min_task_member.empty() || job.min_available < MinTaskTotal(job)) return true;
  std::map<std::string, int> have;
  for (const auto& [key, t] : job.tasks)
    if (In(t->status, mask) || (best_effort && t->status == TaskStatus::kPending && t->best_effort))
      ++have[t->role];
  for (const auto& [role, min] : job.min_task_member)
    if (min > 0 && have[role] < min) return false;
  return true;
}

constexpr uint16_t kReadyMask = kAllocatedMask | Mask(TaskStatus::kSucceeded);
constexpr uint16_t kValidMask = kReadyMask | Mask(TaskStatus::kPipelined) | Mask(TaskStatus::kPending);

bool IsReady(const JobInfo& j) { return j.ReadyTaskNum() + j.pending_best_effort >= j.min_available; }
bool IsPipelined(const JobInfo& j) {
  return j.WaitingTaskNum() + j.ReadyTaskNum() + j.pending_best_effort >= j.min_available;
}

// Whether each subGroupPolicy of the job has at least its minSubGroups gangs
// that `meets` (Volcano's CheckSubJobValid, CheckSubJobReady and
// CheckSubJobPipelined); true for a job without policies.
template <typename Meets>
bool GangsMeet(Session& ssn, const JobInfo& job, Meets meets) {
  if (job.sub_group_policies.empty()) return true;
  const JobGangs& g = ssn.topology().GangsOf(job);
  absl::flat_hash_map<std::string, int32_t> have;
  for (const TopologyUnit& gang : g.gangs)
    if (meets(gang)) ++have[gang.group];
  for (const auto& [group, min] : g.min_gangs)
    if (have[group] < min) return false;
  return true;
}

class GangPlugin : public Plugin {
 public:
  void OnSessionOpen(PluginHandle& h) override {
    Session& ssn = h.session();
    h.AddJobValidFn([&ssn](const JobInfo& job) -> std::optional<ValidateResult> {
      if (!RolesMeet(job, kValidMask, false))
        return ValidateResult{false, "NotEnoughPodsOfTask", "Not enough valid pods of each task for gang-scheduling"};
      if (!GangsMeet(ssn, job, [](const TopologyUnit&) { return true; }))
        return ValidateResult{false, "NotEnoughPodsOfTask",
                              "Not enough valid subGroups of each task for gang-scheduling"};
      if (int valid = job.ValidTaskNum(); valid < job.min_available)
        return ValidateResult{false, "NotEnoughTasks",
                              absl::StrCat("Not enough valid tasks for gang-scheduling, valid: ", valid,
                                           ", min: ", job.min_available)};
      return std::nullopt;
    });
    h.AddJobOrderFn([](const JobInfo& l, const JobInfo& r) {
      bool lr = IsReady(l), rr = IsReady(r);
      if (lr == rr) return 0;
      return lr ? 1 : -1;  // jobs not yet ready go first
    });
    h.AddJobReadyFn([&ssn](const JobInfo& job) {
      return RolesMeet(job, kReadyMask, true) && GangsMeet(ssn, job, [](const TopologyUnit& g) { return g.Ready(); }) &&
             IsReady(job);
    });
    h.AddJobPipelinedFn([&ssn](const JobInfo& job) {
      bool ok = RolesMeet(job, kReadyMask | Mask(TaskStatus::kPipelined), true) &&
                GangsMeet(ssn, job, [](const TopologyUnit& g) { return g.Pipelined(); }) && IsPipelined(job);
      return ok ? kPermit : kReject;
    });
    h.AddSubJobReadyFn([](const TopologyUnit& g) { return g.Ready(); });
    h.AddSubJobPipelinedFn([](const TopologyUnit& g) { return g.Pipelined() ? kPermit : kReject; });
    h.AddSubJobOrderFn([](const TopologyUnit& l, const TopologyUnit& r) {
      bool lr = l.Ready(), rr = r.Ready();
      if (lr == rr) return 0;
      return lr ? 1 : -1;  // gangs not yet ready go first
    });
    h.AddJobStarvingFn([](const JobInfo& job) {
      return job.WaitingTaskNum() + job.ReadyTaskNum() < job.min_available;
    });
    h.AddPreemptableFn(KeepMinAvailable);
    h.AddReclaimableFn(KeepMinAvailable);
    // The gang actions keep minAvailable themselves (actions/gang_bundles.h).
    h.AddUnifiedEvictableFn([](const EvictionContext&, const std::vector<TaskInfo*>& candidates) {
      return std::optional<std::vector<TaskInfo*>>(candidates);
    });
  }

  // Victims only while their job keeps more than minAvailable ready tasks,
  // counting down as victims are taken.
  static std::optional<std::vector<TaskInfo*>> KeepMinAvailable(const TaskInfo&,
                                                                const std::vector<TaskInfo*>& candidates) {
    std::vector<TaskInfo*> victims;
    absl::flat_hash_map<const JobInfo*, int> occupied;
    for (TaskInfo* t : candidates) {
      auto [it, created] = occupied.try_emplace(t->job, 0);
      if (created) it->second = t->job->ReadyTaskNum();
      if (it->second > t->job->min_available) {
        --it->second;
        victims.push_back(t);
      }
    }
    return victims;
  }

  // Volcano's shouldSkipUnschedulableForReleasing: a job short of ready
  // tasks only because some are terminating on their nodes, with nothing
  // left to place, is not unschedulable; its conditions stay as they are.
  static bool HeldByReleasing(const JobInfo& job) {
    int releasing = job.ReleasingScheduledTaskNum();
    if (releasing == 0 || job.Count(Mask(TaskStatus::kPending) | Mask(TaskStatus::kPipelined)) > 0) return false;
    return job.Count(kScheduledMask) + releasing >= job.min_available;
  }

  // Writes the Unschedulable or Scheduled condition of every job that has
  // pods. A PodGroup whose pods do not exist yet is left as it is, as
  // Volcano v1.12+ leaves it (gang.go OnSessionClose, volcano#4011): its
  // Pending phase and the Unschedulable Event say enough, and a job
  // controller creating a gang's pods is not raced by condition writes.
  // volcanic's one addition (docs/foresight.md): a job the session explained
  // why it was not enqueued (Session::Explain) carries that reason, the most
  // binding one, in its Unschedulable message; a Pending PodGroup without
  // pods gets the condition then too, with the reason as its message (no job
  // controller makes pods for a PodGroup not enqueued).
  void OnSessionClose(Session& ssn) override {
    static const PodGroupCondition kScheduled = [] {
      PodGroupCondition c;
      c.type = "Scheduled";
      c.status = "True";
      c.reason = "tasks in gang are ready to be scheduled";
      return c;
    }();
    // Volcano's unschedule_task_count (per job, 0 when ready) and unschedule_job_count.
    SessionMetrics* m = ssn.metrics();
    if (m) m->unschedulable_jobs = 0;
    for (const auto& [key, job] : ssn.jobs()) {
      const std::string* refused = ssn.TopExplanation(*job);
      if (job->tasks.empty()) {
        if (refused && job->IsPending()) ssn.UpdatePodGroupCondition(job, NotEnoughResources(*refused));
        continue;
      }
      bool ready = IsReady(*job);
      if (m) m->unschedulable_tasks[job->key] = 0;
      if (!ready && HeldByReleasing(*job)) continue;
      if (ready) {
        ssn.UpdatePodGroupCondition(job, kScheduled);  // most jobs, most sessions: no string built
        continue;
      }
      int unready = job->min_available - job->ReadyTaskNum() - ssn.DiscardedPendingNum(*job);
      if (m) {
        m->unschedulable_tasks[job->key] = unready;
        ++*m->unschedulable_jobs;
      }
      std::string message = absl::StrCat(unready, "/", job->tasks.size(), " tasks in gang unschedulable: ",
                                         ssn.JobFitError(*job));
      if (refused) absl::StrAppend(&message, "; ", *refused);
      ssn.UpdatePodGroupCondition(job, NotEnoughResources(std::move(message)));
    }
  }

  static PodGroupCondition NotEnoughResources(std::string message) {
    PodGroupCondition c;
    c.type = "Unschedulable";
    c.status = "True";
    c.reason = "NotEnoughResources";
    c.message = std::move(message);
    return c;
  }
};

}  // namespace

PluginOr NewGangPlugin(const Arguments& args) {
  if (auto s = args.CheckKnown({}); !s.ok()) return s;
  return std::make_unique<GangPlugin>();
}

}  // namespace volcanic
