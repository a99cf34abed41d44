#include "volcanic/framework/queue_binding_limits.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "volcanic/cache/cache.h"

namespace volcanic {
namespace {

int64_t Holding(const JobInfo& job) { return job.Count(kHoldingMask); }

// The pods an Inqueue job still needs for its minAvailable: what it reserves.
int64_t Reserved(const JobInfo& job, int64_t holding) {
  return job.phase == "Inqueue" ? std::max<int64_t>(0, job.min_available - holding) : 0;
}

// "namespace a holds 2 pod(s) in queue q1 and enqueued jobs need 1 more".
std::string Holds(const JobInfo& job, int64_t running, int64_t reserved) {
  return absl::StrCat("namespace ", job.ns, " holds ", running, " pod(s) in queue ", job.queue,
                      reserved ? absl::StrCat(" and enqueued jobs need ", reserved, " more") : "");
}

std::string Names(const std::vector<const QueueBinding*>& bindings) {
  return absl::StrJoin(bindings, ", ", [](std::string* out, const QueueBinding* b) { out->append(b->name); });
}

}  // namespace

QueueBindingLimits::QueueBindingLimits(const Cache& cache,
                                       const std::vector<std::pair<std::string_view, JobInfo*>>& jobs) {
  for (const auto& [name, b] : cache.queue_bindings()) by_queue_[b.queue].push_back(&b);
  if (by_queue_.empty()) return;
  for (const auto& [key, job] : jobs) {
    if (!by_queue_.contains(job->queue)) continue;
    JobLimits& limits = jobs_[job] = Resolve(cache, *job);
    int64_t holding = Holding(*job);
    for (Entry& e : limits.entries) {
      e.usage->running_pods += holding;
      e.usage->reserved_pods += Reserved(*job, holding);
      if (job->phase == "Inqueue") ++e.usage->pending_jobs;
    }
  }
}

QueueBindingLimits::JobLimits QueueBindingLimits::Resolve(const Cache& cache, const JobInfo& job) {
  JobLimits limits;
  limits.bindings = &by_queue_.at(job.queue);
  const Labels& ns_labels = cache.NamespaceLabels(job.ns);
  for (const QueueBinding* b : *limits.bindings) {
    if (b->Binds(job.ns, ns_labels)) limits.entries.push_back({b, &usage_[{b, job.ns}]});
  }
  return limits;
}

const QueueBindingLimits::JobLimits* QueueBindingLimits::Find(const JobInfo* job) const {
  if (jobs_.empty() || !job) return nullptr;
  auto it = jobs_.find(job);
  return it == jobs_.end() ? nullptr : &it->second;
}

std::optional<std::string> QueueBindingLimits::EnqueueRefusal(const JobInfo& job) const {
  const JobLimits* limits = Find(&job);
  if (!limits) return std::nullopt;
  if (limits->entries.empty()) {
    return absl::StrCat("queuebinding: namespace ", job.ns, " is not bound to queue ", job.queue,
                        " (QueueBinding ", Names(*limits->bindings), ")");
  }
  int64_t need = std::max<int64_t>(0, job.min_available - Holding(job));
  for (const Entry& e : limits->entries) {
    const QueueBinding& b = *e.binding;
    const Usage& u = *e.usage;
    if (b.max_pending_jobs && u.pending_jobs + 1 > *b.max_pending_jobs) {
      return absl::StrCat("queuebinding: maxPendingJobs ", *b.max_pending_jobs, " of QueueBinding ", b.name,
                          " reached: namespace ", job.ns, " has ", u.pending_jobs, " job(s) pending in queue ",
                          job.queue);
    }
    if (b.max_running_pods && u.running_pods + u.reserved_pods + need > *b.max_running_pods) {
      return absl::StrCat("queuebinding: maxRunningPods ", *b.max_running_pods, " of QueueBinding ", b.name, ": ",
                          Holds(job, u.running_pods, u.reserved_pods), "; this job needs ", need);
    }
  }
  return std::nullopt;
}

void QueueBindingLimits::Enqueued(const JobInfo& job) {
  const JobLimits* limits = Find(&job);
  if (!limits) return;
  int64_t need = std::max<int64_t>(0, job.min_available - Holding(job));
  for (const Entry& e : limits->entries) {
    ++e.usage->pending_jobs;
    e.usage->reserved_pods += need;
  }
}

std::optional<std::string> QueueBindingLimits::AllocateRefusal(const TaskInfo& task) const {
  const JobLimits* limits = Find(task.job);
  if (!limits) return std::nullopt;
  const JobInfo& job = *task.job;
  // A pod of an Inqueue job short of its minAvailable takes what the job reserved.
  int64_t more = Reserved(job, Holding(job)) > 0 ? 0 : 1;
  for (const Entry& e : limits->entries) {
    const QueueBinding& b = *e.binding;
    const Usage& u = *e.usage;
    if (b.max_running_pods && u.running_pods + u.reserved_pods + more > *b.max_running_pods) {
      return absl::StrCat("queuebinding: maxRunningPods ", *b.max_running_pods, " of QueueBinding ", b.name,
                          " reached: ", Holds(job, u.running_pods, u.reserved_pods));
    }
  }
  return std::nullopt;
}

void QueueBindingLimits::StatusChanged(const TaskInfo& task, TaskStatus before) {
  const JobLimits* limits = Find(task.job);
  if (!limits) return;
  int delta = ((Mask(task.status) & kHoldingMask) != 0) - ((Mask(before) & kHoldingMask) != 0);
  if (delta == 0) return;
  int64_t holding = Holding(*task.job);
  int64_t reserved_change = Reserved(*task.job, holding) - Reserved(*task.job, holding - delta);
  for (const Entry& e : limits->entries) {
    e.usage->running_pods += delta;
    e.usage->reserved_pods += reserved_change;
  }
}

}  // namespace volcanic
