// Session close: PodGroup and queue status, undo of uncommitted work, and
// the reasons pending pods stayed pending (reference §4.1 CloseSession).
#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "volcanic/framework/heap.h"
#include "volcanic/framework/session.h"

namespace volcanic {
namespace {

// Volcano's getPodGroupPhase.
std::string_view PodGroupPhase(const JobInfo& job, bool unschedulable) {
  if (job.Count(Mask(TaskStatus::kRunning)) != 0 && unschedulable) return "Unknown";
  // Releasing tasks still on a node count as scheduled (current Volcano).
  int scheduled = job.Count(kScheduledMask) + job.ReleasingScheduledTaskNum();
  int completed = job.Count(kCompletedMask);
  if (scheduled >= job.min_available) return scheduled == completed ? "Completed" : "Running";
  return std::string_view(job.phase) == "Inqueue" ? "Inqueue" : "Pending";
}

std::string SortedHistogram(const std::map<std::string, int>& h) {
  std::vector<std::string> items;
  for (const auto& [k, v] : h) items.push_back(absl::StrCat(v, " ", k));
  std::sort(items.begin(), items.end());
  return absl::StrJoin(items, ", ");
}

}  // namespace

int Session::DiscardedPendingNum(const JobInfo& job) const {
  auto it = discarded_.find(&job);
  if (it == discarded_.end()) return 0;
  return static_cast<int>(std::count_if(it->second.begin(), it->second.end(),
                                        [](const TaskInfo* t) { return t->status == TaskStatus::kPending; }));
}

std::string Session::JobFitError(const JobInfo& job) const {
  // A PodGroup without pods (a job not yet enqueued) is the common case: say it directly.
  if (job.tasks.empty()) return absl::StrCat("pod group is not ready, ", job.min_available, " minAvailable");
  std::map<std::string, int> by_status;
  for (int i = 0; i < kTaskStatusCount; ++i)
    if (job.count[i] > 0) by_status[StatusName(static_cast<TaskStatus>(1 << i))] = job.count[i];
  by_status["minAvailable"] = job.min_available;
  std::string msg = absl::StrCat("pod group is not ready, ", SortedHistogram(by_status));
  if (int pending = job.Count(Mask(TaskStatus::kPending)); pending > 0) {
    int schedulable = DiscardedPendingNum(job);
    std::map<std::string, int> reasons;
    if (schedulable > 0) reasons["Schedulable"] = schedulable;
    if (pending > schedulable) reasons["Unschedulable"] = pending - schedulable;
    absl::StrAppend(&msg, "; Pending: ", SortedHistogram(reasons));
  }
  // Volcano's JobFitErrors come first: what kept the whole job back.
  if (auto it = job_fit_errors_.find(&job); it != job_fit_errors_.end())
    return absl::StrCat(msg, ". Origin reason is: ", it->second);
  if (!FindQueue(job.queue)) return absl::StrCat(msg, ". Origin reason is: queue ", job.queue, " does not exist");
  // Volcano names a random task here; the first by name is as good and stable.
  auto j = fit_errors_.find(&job);
  if (j != fit_errors_.end() && !j->second.by_task.empty()) {
    const auto& [key, errors] = *j->second.by_task.begin();
    auto t = job.tasks.find(key);
    std::string name = t != job.tasks.end() ? t->second->name : key;
    absl::StrAppend(&msg, ". Origin reason is ", name, ": ", errors.Error());
  }
  return msg;
}

void Session::Close(Decisions* out) {
  if (!failed()) ClosePlugins();
  if (failed()) {
    RollBack();
    return;
  }
  WritePodGroupStatus(out);
  for (const auto& [key, job] : jobs_)
    if (job->IsPending() || job->Count(Mask(TaskStatus::kPending)) > 0) out->pending = true;
  WriteQueueStatus(out);
  out->wake_at_ms = wake_at_ms_;
  out->binds = binds_;
  out->bind_annotations = bind_annotations_;
  out->volume_binds = volume_binds_;
  if (!volume_binds_.empty()) out->volume_bind_timeout_s = volume_bind_timeout_s_;
  out->evictions = evictions_;
  out->ungate = ungates_;
  RevertUncommitted();
  WriteUnschedulable(out);
  WriteWhy(out);
  if (opts_.timings) WriteTimings(out);
  if (opts_.metrics) {
    CountScheduled(*out);
    out->metrics = std::move(metrics_);
  }
}

// Volcano's e2e job scheduling metrics count each task allocate places. Only
// binds here: the pipelined tasks are reported every session they wait.
void Session::CountScheduled(const Decisions& d) {
  auto count = [this](const std::string& pod) {
    const TaskInfo* t = cache_.FindTask(pod);
    if (!t || !t->job) return;
    ScheduledJob& s = metrics_.scheduled[t->job->key];
    s.queue = t->job->queue;
    s.creation_ms = t->job->creation_ms;
    ++s.tasks;
  };
  for (const auto& [pod, node] : d.binds) count(pod);
}

void Session::WritePodGroupStatus(Decisions* out) {
  for (auto& [key, job] : jobs_) {
    if (job->Count(Mask(TaskStatus::kPipelined)) > 0)
      for (const auto& [tk, t] : job->tasks)
        if (t->status == TaskStatus::kPipelined) out->pipelined.emplace_back(tk, t->node_name);
    job->SetPhase(PodGroupPhase(*job, unschedulable_now_.contains(job)));
    std::array<int32_t, 3> counts = {job->Count(Mask(TaskStatus::kRunning)),
                                     job->Count(Mask(TaskStatus::kSucceeded)),
                                     job->Count(Mask(TaskStatus::kFailed))};
    bool unchanged = job->status_known && job->phase == job->status_phase &&
                     job->conditions == job->status_conditions && counts == job->status_counts;
    ReportPodGroupEvent(key, job, !unchanged, out);
    if (opts_.changed_only && unchanged) continue;
    PodGroupStatusOut& st = out->podgroups[std::string(key)];
    st.phase = job->phase;
    st.conditions = job->conditions;
    st.running = counts[0];
    st.succeeded = counts[1];
    st.failed = counts[2];
  }
}

// Volcano's RecordJobStatusEvent (pkg/scheduler/cache/cache.go), called for
// every job of the session: a Warning Unschedulable on a PodGroup still
// Pending, Inqueue or Unknown, else a Normal Scheduled when its status
// changed. Kubernetes' recorder folds repeats of an identical Event into one
// (a count); here an unchanged one is not reported at all, so the API
// server's load does not grow with the number of waiting gangs.
void Session::ReportPodGroupEvent(std::string_view key, JobInfo* job, bool status_changed, Decisions* out) {
  if (!job->has_podgroup) return;
  std::string_view phase = job->phase;
  PodGroupEvent e;
  if (phase == "Pending" || phase == "Inqueue" || phase == "Unknown") {
    e = {"Warning", "Unschedulable",
         absl::StrCat(job->Count(Mask(TaskStatus::kPending)), "/", job->tasks.size(),
                      " tasks in gang unschedulable: ", JobFitError(*job))};
  } else if (status_changed) {
    e = {"Normal", "Scheduled", "pod group is ready"};
  } else {
    return;
  }
  std::string id = absl::StrCat(e.type, "\n", e.reason, "\n", e.message);
  if (id == job->last_event) return;
  job->last_event = std::move(id);
  out->podgroup_events[std::string(key)] = std::move(e);
}

// queue.status.allocated: Σ requests of allocated tasks, added up the parent
// chain (every queue but root has root as its last ancestor).
void Session::WriteQueueStatus(Decisions* out) {
  for (const auto& [name, q] : queues_) out->queue_allocated[name] = Resource();
  out->queue_deserved = deserved_;
  // Each queue's own jobs are summed by the cache (queue_sums.h); the chain up
  // to root is walked once a queue.
  static const Resource kNothing;
  for (const auto& [queue, sums] : cache_.queue_sums()) {
    const Resource& allocated = sums.allocated;
    if (allocated == kNothing) continue;
    std::string name(queue);
    for (int depth = 0; depth <= static_cast<int>(queues_.size()) && queues_.contains(name); ++depth) {
      out->queue_allocated[name] += allocated;
      if (name == "root") break;
      const QueueInfo* q = queues_.at(name);
      name = q->parent.empty() ? "root" : q->parent;
    }
  }
  if (!opts_.changed_only) return;
  for (const auto& [name, q] : queues_)
    if (q->status_allocated && *q->status_allocated == out->queue_allocated[name]) out->queue_allocated.erase(name);
}

void Session::RevertUncommitted() {
  for (TaskInfo* t : touched_) {
    if (t->status == TaskStatus::kAllocated || t->status == TaskStatus::kPipelined) {
      PlaceTask(t, nullptr, TaskStatus::kPending);
      Unreserve(t);
    }
  }
  touched_.clear();
  // Evictions of statements never committed nor discarded.
  for (auto it = evicted_.rbegin(); it != evicted_.rend(); ++it)
    if (it->first->status == TaskStatus::kReleasing && it->first->assumed != Assumed::kEvict)
      SetTaskStatus(it->first, it->second);
  evicted_.clear();
}

// After a plugin failure: the cache as it was before the session, as if it
// never ran. Tasks this session placed go back to Pending off their node
// (binds it committed included), evicted tasks to their status before
// (committed evictions included), jobs to their phase and conditions at open.
// Latest change first, so a task changed twice ends as it was first seen.
void Session::RollBack() {
  for (auto it = touched_.rbegin(); it != touched_.rend(); ++it) {
    TaskInfo* t = *it;
    if (!In(t->status, Mask(TaskStatus::kAllocated) | Mask(TaskStatus::kPipelined) | Mask(TaskStatus::kBinding)))
      continue;
    PlaceTask(t, nullptr, TaskStatus::kPending);
    Unreserve(t);
    t->assumed = Assumed::kNone;
  }
  touched_.clear();
  for (auto it = evicted_.rbegin(); it != evicted_.rend(); ++it) {
    if (it->first->status != TaskStatus::kReleasing) continue;  // discarded already
    SetTaskStatus(it->first, it->second);
    it->first->assumed = Assumed::kNone;
  }
  evicted_.clear();
  for (size_t i = 0; i < jobs_.size(); ++i) jobs_[i].second->SetPhase(open_phases_[i]);
  for (auto& [job, conditions] : open_conditions_) job->conditions = std::move(conditions);
  open_conditions_.clear();
}

// A scheduling-gated pod keeps the condition the API server gave it
// (PodScheduled=False, SchedulingGated): Volcano's RecordJobStatusEvent
// (pkg/scheduler/cache/cache.go) leaves it alone.
void Session::WriteUnschedulable(Decisions* out) {
  auto reported = [](const TaskInfo* t) { return t && t->status == TaskStatus::kPending && !t->gated; };
  for (const auto& [job, fits] : fit_errors_)
    for (const auto& [task_key, fe] : fits.by_task) {
      TaskInfo* t = cache_.FindTask(task_key);
      if (reported(t)) out->unschedulable[task_key] = fe.Error();
    }
  for (const auto& [task_key, reason] : skipped_) {
    TaskInfo* t = cache_.FindTask(task_key);
    if (reported(t) && !out->unschedulable.contains(task_key)) out->unschedulable[task_key] = reason;
  }
  // Other pending tasks of a gang found unschedulable in this session (for
  // example tasks that fit but were given back because the gang did not):
  // the gang's reason, as Volcano puts it in their pod conditions. A gang
  // whose pods are still being created (fewer than minAvailable, more than
  // the last session saw) waits until its count holds still for a session:
  // whether a session catches a job controller midway is a race in Volcano,
  // and every catch rewrote each pod's condition (its message counts the
  // pods) with an Event.
  for (const auto& [job, message] : gang_unschedulable_) {
    if (job->tasks.size() < static_cast<size_t>(job->min_available) && job->tasks.size() > job->tasks_seen) {
      out->deferred = true;
      continue;
    }
    for (const auto& [tk, t] : job->tasks)
      if (reported(t) && !out->unschedulable.contains(tk)) out->unschedulable[tk] = message;
  }
  for (auto& [key, job] : jobs_) job->tasks_seen = job->tasks.size();
}

void Session::Explain(const JobInfo& job, std::string reason) const {
  std::vector<std::string>& reasons = explained_[&job];
  if (std::find(reasons.begin(), reasons.end(), reason) == reasons.end()) reasons.push_back(std::move(reason));
}

// Why the job's first unplaced pod (by key) was not placed: its fit errors
// (kube's per-node reasons) if a node was tried for it, else what the
// session reported for it; nullopt when no pod of the job was reported.
std::optional<std::string> Session::FirstUnplaced(const JobInfo& job, const Decisions& out) const {
  if (auto f = fit_errors_.find(&job); f != fit_errors_.end() && !f->second.by_task.empty())
    return f->second.by_task.begin()->second.Error();
  // Only pending pods are reported: a job with none (most, most sessions) is not looked through.
  if (job.Count(Mask(TaskStatus::kPending)) == 0) return std::nullopt;
  for (const auto& [tk, t] : job.tasks)
    if (auto it = out.unschedulable.find(tk); it != out.unschedulable.end()) return it->second;
  return std::nullopt;
}

// Every job still waiting (not yet enqueued, enqueued but not started, or
// with pods the session could not place): what held it back, from what was
// decided this session (Explain, the gang's Unschedulable message, its first
// unplaced pod's reasons), and its place in line. Only waiting jobs cost
// anything here.
void Session::WriteWhy(Decisions* out) const {
  std::map<std::string, std::vector<const JobInfo*>> by_queue;
  for (const auto& [key, job] : jobs_) {
    std::optional<std::string> unplaced = FirstUnplaced(*job, *out);
    // Inqueue alone is no wait: a gang placed this session stays Inqueue until its pods run.
    bool waiting = job->IsPending() || unplaced ||
                   (job->phase == "Inqueue" && job->ReadyTaskNum() < job->min_available);
    if (!waiting) continue;
    JobWhy& why = out->why[std::string(key)];
    why.queue = job->queue;
    auto add = [&why](const std::string& reason) {
      if (std::find(why.reasons.begin(), why.reasons.end(), reason) == why.reasons.end()) why.reasons.push_back(reason);
    };
    if (auto it = explained_.find(job); it != explained_.end())
      for (const std::string& r : it->second) add(r);
    for (const auto& [j, message] : gang_unschedulable_)
      if (j == job) add(message);
    if (unplaced) add(*unplaced);
    if (why.reasons.empty())
      why.reasons.push_back(job->IsPending() ? "not tried for enqueue this session" : "not tried for placement this session");
    by_queue[job->queue].push_back(job);
  }
  std::vector<const QueueInfo*> queues;
  for (auto& [name, jobs] : by_queue) {
    SortByOrder(jobs, [this](const JobInfo* l, const JobInfo* r) { return JobOrder(*l, *r); });
    for (size_t i = 0; i < jobs.size(); ++i) out->why[jobs[i]->key].position = static_cast<int>(i) + 1;
    if (auto q = queues_.find(name); q != queues_.end()) queues.push_back(q->second);
  }
  // Heap sorts: a plugin's order that is not a strict weak order gives some order, never a crash.
  SortByOrder(queues, [this](const QueueInfo* l, const QueueInfo* r) { return QueueOrder(*l, *r); });
  for (size_t i = 0; i < queues.size(); ++i)
    for (const JobInfo* j : by_queue[queues[i]->name]) out->why[j->key].queue_position = static_cast<int>(i) + 1;
}

}  // namespace volcanic
