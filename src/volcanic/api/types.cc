#include "volcanic/api/types.h"

#include <algorithm>
#include <bit>

namespace volcanic {

int StatusIndex(TaskStatus s) { return std::countr_zero(Mask(s)); }

const char* StatusName(TaskStatus s) {
  static constexpr const char* kNames[kTaskStatusCount] = {
      "Pending", "Allocated", "Pipelined", "Binding", "Bound",
      "Running", "Releasing", "Succeeded", "Failed",  "Unknown"};
  return kNames[StatusIndex(s)];
}

namespace {

// Whether NodeInfo::Account counts a task alike in statuses a and b: it tells
// only Pipelined and Releasing apart from the rest.
bool NodeCountsAlike(TaskStatus a, TaskStatus b) {
  auto kind = [](TaskStatus s) {
    return s == TaskStatus::kPipelined || s == TaskStatus::kReleasing ? s : TaskStatus::kAllocated;
  };
  return kind(a) == kind(b);
}

}  // namespace

// Volcano's NodeInfo.AddTask: Releasing tasks still use the node but will
// free it; Pipelined tasks only reserve future capacity; terminal tasks are
// never on a node (the cache does not add them).
void NodeInfo::Account(const TaskInfo& t, int sign) {
  const Resource& r = t.resreq;
  auto add = [sign, &r](Resource& to) {
    if (sign > 0) to += r; else to -= r;
  };
  if (t.status == TaskStatus::kPipelined) {
    add(pipelined);
  } else {
    add(used);
    if (ready_totals) add(ready_totals->used);
    if (sign > 0) idle -= r; else idle += r;
    if (t.status == TaskStatus::kReleasing) add(releasing);
  }
  pod_count += sign;
  nonzero_cpu += sign * t.nonzero_cpu;
  nonzero_mem += sign * t.nonzero_mem;
  if (!t.gpu_grants.empty() && !gpus.cards.empty()) AccountGpuGrants(gpus, t.gpu_grants, sign);
  Changed();
}

void NodeInfo::Changed() {
  ++version;
  if (ready_totals) ready_totals->changes.push_back(index);
}

void NodeInfo::AddTask(TaskInfo* t) {
  Account(*t, +1);
  if (t->placement)
    used_ports.insert(used_ports.end(), t->placement->host_ports.begin(), t->placement->host_ports.end());
  tasks[t->key] = t;
}

void NodeInfo::RemoveTask(TaskInfo* t) {
  Account(*t, -1);
  if (t->placement) {
    for (const auto& p : t->placement->host_ports) {
      auto it = std::find(used_ports.begin(), used_ports.end(), p);
      if (it != used_ports.end()) used_ports.erase(it);
    }
  }
  tasks.erase(t->key);
}

bool NodeInfo::FitsFutureIdle(const Resource& req, ResourceId* short_of) const {
  for (int i = 0; i < req.Size(); ++i) {
    int64_t want = req.Get(i);
    if (want <= 0) continue;
    if (want > idle.Get(i) + releasing.Get(i) - pipelined.Get(i)) {
      *short_of = i;
      return false;
    }
  }
  return true;
}

void NodeInfo::SetAllocatable(Resource alloc) {
  idle = alloc - used;
  allocatable = std::move(alloc);
  Changed();
}

void NodeInfo::SetGpus(NodeGpus registered) {
  gpus = std::move(registered);
  for (const auto& [_, t] : tasks)
    if (!t->gpu_grants.empty()) AccountGpuGrants(gpus, t->gpu_grants, +1);
  Changed();
}

void JobInfo::Account(const TaskInfo& t, int sign) {
  count[StatusIndex(t.status)] += sign;
  if (t.status == TaskStatus::kPending) {
    if (t.best_effort) pending_best_effort += sign;
    if (sign > 0) pending_request += t.resreq; else pending_request -= t.resreq;
  }
  if (In(t.status, kAllocatedMask)) {
    if (sign > 0) allocated += t.resreq; else allocated -= t.resreq;
  }
  if (t.SchedulingGated()) {
    if (sign > 0) gated_request += t.resreq; else gated_request -= t.resreq;
  }
  if (t.HoldsQueueRoom()) holding_queue_room += sign;
}

void JobInfo::TakeTasks(JobInfo&& old) {
  tasks = std::move(old.tasks);
  count = old.count;
  pending_best_effort = old.pending_best_effort;
  allocated = std::move(old.allocated);
  pending_request = std::move(old.pending_request);
  total_request = std::move(old.total_request);
  gated_request = std::move(old.gated_request);
  holding_queue_room = old.holding_queue_room;
}

void JobInfo::AddTask(TaskInfo* t) {
  tasks[t->key] = t;
  Account(*t, +1);
  total_request += t->resreq;
  Recount();
}

void JobInfo::RemoveTask(TaskInfo* t) {
  if (tasks.erase(t->key) == 0) return;
  Account(*t, -1);
  total_request -= t->resreq;
  Recount();
}

void JobInfo::SetPhase(std::string_view p) {
  if (p == phase) return;  // sessions set every job's phase at close; most keep theirs
  phase = std::string(p);
  Recount();
}

// The terms proportion and overcommit sum per job at session open, and the
// allocated the queue status adds up: only jobs that take part in sessions
// (Cache::Schedulable) count.
void JobInfo::Recount() {
  if (!queue_sums.linked()) return;
  QueueSums terms;
  if (has_podgroup || implicit) {
    static const Resource kNone;
    const Resource& min = min_resources ? *min_resources : kNone;
    terms.jobs = 1;
    terms.allocated = allocated;
    terms.request = allocated;
    terms.request += pending_request;
    // What an admitted job still reserves (GetInqueueResource): minResources
    // less what it already holds (Allocated or Binding tasks of a job still
    // Inqueue are in `allocated` already: Volcano's fix against counting
    // them twice). Overcommit reserves an Inqueue job's whole minResources.
    bool running_ready = phase == "Running" && min_resources && Count(kAllocatedMask) >= min_available;
    if (phase == "Inqueue" || running_ready) {
      terms.inqueue.AddExcess(min, allocated);
      if (phase == "Inqueue") terms.overcommit_inqueue += min;
      else terms.overcommit_inqueue.AddExcess(min, allocated);
      if (!gated_request.IsEmpty()) {  // scheduling-gated tasks reserve nothing (DeductGated)
        terms.inqueue = DeductGated(terms.inqueue);
        terms.overcommit_inqueue = DeductGated(terms.overcommit_inqueue);
      }
    }
    terms.elastic.AddExcess(allocated, min);
  }
  queue_sums.Count(queue, std::move(terms));
}

int JobInfo::ReadyTaskNum() const {
  return Count(kAllocatedMask | Mask(TaskStatus::kSucceeded));
}

int JobInfo::WaitingTaskNum() const { return Count(Mask(TaskStatus::kPipelined)); }

int JobInfo::ValidTaskNum() const {
  return Count(kAllocatedMask | Mask(TaskStatus::kSucceeded) | Mask(TaskStatus::kPipelined) |
               Mask(TaskStatus::kPending));
}

int JobInfo::ReleasingScheduledTaskNum() const {
  if (Count(Mask(TaskStatus::kReleasing)) == 0) return 0;
  int n = 0;
  for (const auto& [key, t] : tasks) n += t->status == TaskStatus::kReleasing && t->node;
  return n;
}

void SetTaskStatus(TaskInfo* t, TaskStatus s) { PlaceTask(t, t->node, s); }

// Membership in the job never changes here, and in the node only when the
// node does: the rest is re-accounting. A status change the node counts alike
// (Allocated to Binding, a bind) leaves the node as it was, unchanged for the
// answers kept by its version.
void PlaceTask(TaskInfo* t, NodeInfo* node, TaskStatus s) {
  if (t->job) t->job->Account(*t, -1);
  if (t->node == node) {
    bool recount = node && !NodeCountsAlike(t->status, s);
    if (recount) node->Account(*t, -1);
    t->status = s;
    if (recount) node->Account(*t, +1);
  } else {
    if (t->node) t->node->RemoveTask(t);
    if (!node) t->gpu_grants.clear();  // cards a session chose go with the placement
    t->status = s;
    t->node = node;
    t->node_name = node ? node->name : std::string();
    if (node) node->AddTask(t);
  }
  if (t->job) {
    t->job->Account(*t, +1);
    t->job->Recount();
  }
}

}  // namespace volcanic
