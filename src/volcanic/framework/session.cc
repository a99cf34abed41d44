#include "volcanic/framework/session.h"

#include <algorithm>
#include <array>
#include <chrono>

#include "volcanic/api/status_macros.h"
#include "volcanic/framework/node_search.h"

namespace volcanic {

namespace {

const std::vector<NodeInfo*> kNoNodes;  // a session's nodes until it opens

// Wall seconds since `start`.
double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// `call`, its wall seconds added to *seconds unless that is nullptr.
template <typename F>
void Measured(double* seconds, F call) {
  if (!seconds) return call();
  auto start = std::chrono::steady_clock::now();
  call();
  *seconds += SecondsSince(start);
}

template <typename T>
bool CreationThenUid(const T& l, const T& r) {
  if (l.creation_ms != r.creation_ms) return l.creation_ms < r.creation_ms;
  return l.uid < r.uid;
}

}  // namespace

Session::Session(Cache& cache, const SchedulerConf& conf, SessionOptions opts, const Registry& registry)
    : cache_(cache), conf_(conf), opts_(std::move(opts)), nodes_(&kNoNodes), registry_(registry) {}

Session::~Session() = default;

template <typename F>
TieredRefs<F> Session::Collect(F PluginSlot::*field, const char* flag) const {
  TieredRefs<F> out(conf_.tiers.size());
  for (const auto& s : slots_) {
    if (!(s.get()->*field)) continue;
    if (flag && s->option && !s->option->Enabled(flag)) continue;
    out[s->tier].push_back(std::cref(s.get()->*field));
  }
  return out;
}

template <typename F>
void Session::TimedHook(PluginSlot& slot, HookKind kind, F call) {
  if (!opts_.timings) return call();
  HookSample& sample = slot.times[static_cast<size_t>(kind)];
  sample.Count();
  HookTimer timer(&sample);
  call();
}

absl::Status Session::Open() {
  auto start = std::chrono::steady_clock::now();
  nodes_ = &cache_.ReadyNodes();
  topology_ = std::make_unique<SessionTopology>(cache_.HyperNodes());
  total_resource_ = cache_.ReadyAllocatable();
  for (const auto& [name, q] : cache_.queues()) queues_.emplace(name, &q);
  for (const auto& [key, job] : cache_.jobs()) {
    if (!Cache::Schedulable(*job)) continue;
    jobs_.emplace_back(key, job.get());
    open_phases_.push_back(job->phase);
  }
  ResolvePriorities();
  binding_limits_.emplace(cache_, jobs_);
  job_orders_.emplace(queues_, jobs_, total_resource_, opts_.now_ms, [this](int64_t ms) { WakeAt(ms); });
  if (metrics()) CountWorkloads();

  for (size_t ti = 0; ti < conf_.tiers.size(); ++ti) {
    for (const PluginOption& opt : conf_.tiers[ti].plugins) {
      auto slot = std::make_unique<PluginSlot>();
      slot->name = opt.name;
      slot->option = &opt;
      slot->tier = static_cast<int>(ti);
      ASSIGN_OR_RETURN(slot->plugin, registry_.BuildPlugin(opt.name, opt.arguments));
      slots_.push_back(std::move(slot));
    }
  }
  for (auto& slot : slots_) {
    PluginHandle handle(*this, *slot, opts_.timings);
    Measured(metrics() ? &metrics_.plugin_session_seconds[slot->name].first : nullptr, [&] {
      TimedHook(*slot, HookKind::kOnSessionOpen, [&] { slot->plugin->OnSessionOpen(handle); });
    });
  }
  CollectCallbacks();

  for (const std::string& name : conf_.actions) {
    auto it = conf_.action_arguments.find(name);
    ASSIGN_OR_RETURN(auto action, registry_.BuildAction(
                                      name, it == conf_.action_arguments.end() ? Arguments() : it->second));
    actions_.emplace_back(std::move(action), name);
  }
  node_search_ = std::make_unique<NodeSearch>(*this, opts_.node_memory);
  metrics_.open_seconds = SecondsSince(start);
  return absl::OkStatus();
}

// The session's jobs and their tasks per queue, by PodGroup phase and task
// status, every phase and status of every queue included (zeros too), as
// Volcano's scheduler counts them when a session opens.
void Session::CountWorkloads() {
  static constexpr const char* kPhases[] = {"Pending", "Inqueue", "Running", "Unknown", "Completed"};
  for (const auto& [name, q] : queues_) {
    for (const char* phase : kPhases) metrics_.queue_podgroups[name][phase] = 0;
    for (int i = 0; i < kTaskStatusCount; ++i)
      metrics_.queue_tasks[name][StatusName(static_cast<TaskStatus>(1 << i))] = 0;
  }
  for (const auto& [key, job] : jobs_) {
    if (!job->phase.empty()) ++metrics_.queue_podgroups[job->queue][job->phase];
    for (int i = 0; i < kTaskStatusCount; ++i)
      if (int n = job->count[i]) metrics_.queue_tasks[job->queue][StatusName(static_cast<TaskStatus>(1 << i))] += n;
  }
}

// The plugins' callbacks, by extension point and tier, with their enable
// flags applied.
void Session::CollectCallbacks() {
#define VOLCANIC_COLLECT(Name, field, Fn, flag, combination, python) field##_ = Collect(&PluginSlot::field, flag);
  VOLCANIC_EXTENSION_POINTS(VOLCANIC_COLLECT)
#undef VOLCANIC_COLLECT
  static const NodeLocalFn kNever = [](const TaskInfo&) { return false; };
  for (const auto& s : slots_) {
    bool predicate_on = s->predicate && (!s->option || s->option->Enabled("enablePredicate"));
    bool order_on = (s->node_order || s->batch_node_order) &&
                    (!s->option || s->option->Enabled("enableNodeOrder"));
    if (predicate_on || order_on) {
      node_local_.push_back(s->node_local ? s->node_local : kNever);
      if (!s->plugin->AnswersOutliveSession()) answers_outlive_session_ = false;
    }
  }
}

void Session::Notify(const TieredRefs<TaskEventFn>& handlers, const TaskInfo& t) const {
  for (const auto& tier : handlers)
    for (const auto& fn : tier) fn(t);
}

void Session::ClosePlugins() {
  for (auto& slot : slots_)
    Measured(metrics() ? &metrics_.plugin_session_seconds[slot->name].second : nullptr, [&] {
      TimedHook(*slot, HookKind::kOnSessionClose, [&] { slot->plugin->OnSessionClose(*this); });
    });
}

void Session::WriteTimings(Decisions* out) const {
  for (const auto& slot : slots_)
    for (size_t k = 0; k < kHookKinds; ++k) {
      HookTime t = slot->times[k].Estimate();
      if (t.calls == 0) continue;
      // A plugin listed twice in the configuration is reported once, summed.
      HookTime& sum = out->plugin_timings[slot->name][HookKindName(static_cast<HookKind>(k))];
      sum.nanos += t.nanos;
      sum.calls += t.calls;
    }
}

void Session::ResolvePriorities() {
  // With several global defaults (the API server allows only one), the
  // first by name wins, so the result does not depend on hash order.
  int32_t default_priority = 0;
  const std::string* default_name = nullptr;
  for (const auto& [name, pc] : cache_.priority_classes())
    if (pc.global_default && (!default_name || name < *default_name)) {
      default_priority = pc.value;
      default_name = &name;
    }
  for (auto& [key, job] : jobs_) {
    auto it = cache_.priority_classes().find(job->priority_class_name);
    job->priority = it == cache_.priority_classes().end() ? default_priority : it->second.value;
  }
}

void Session::RunActions(Decisions* out) {
  for (auto& [action, name] : actions_) {
    if (failed()) return;
    auto start = std::chrono::steady_clock::now();
    action->Execute(*this);
    std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    out->action_seconds.emplace_back(name, took.count());
  }
}

uint64_t Session::changes() const { return node_search_->changes(); }

void Session::Fail(absl::Status error) {
  if (failure_.ok()) failure_ = std::move(error);
}

const QueueInfo* Session::FindQueue(const std::string& name) const {
  if (last_found_queue_ && last_found_queue_->name == name) return last_found_queue_;
  auto it = queues_.find(name);
  if (it == queues_.end()) return nullptr;
  return last_found_queue_ = it->second;
}

// Combined extension points.
bool Session::JobOrder(const JobInfo& l, const JobInfo& r) const {
  if (std::optional<bool> first = job_orders_->First(l, r)) return *first;
  if (int c = FirstNonZero(job_order_, l, r)) return c < 0;
  return ArrivedBefore(l, r);
}

bool Session::QueueOrder(const QueueInfo& l, const QueueInfo& r) const {
  if (int c = FirstNonZero(queue_order_, l, r)) return c < 0;
  return CreationThenUid(l, r);
}

bool Session::TaskOrder(const TaskInfo& l, const TaskInfo& r) const {
  if (int c = FirstNonZero(task_order_, l, r)) return c < 0;
  if (l.index >= 0 && r.index >= 0 && l.index != r.index) return l.index < r.index;
  return CreationThenUid(l, r);
}

std::optional<ValidateResult> Session::JobInvalid(const JobInfo& job) const {
  for (const auto& tier : job_valid_)
    for (const auto& fn : tier)
      if (auto r = fn(job); r && !r->pass) return r;
  return std::nullopt;
}

bool Session::JobReady(const JobInfo& job) const { return AllTrue(job_ready_, job); }
bool Session::JobPipelined(const JobInfo& job) const { return Vote(job_pipelined_, job); }
bool Session::JobStarving(const JobInfo& job) const { return FirstTierAll(job_starving_, job); }
bool Session::JobEnqueueable(const JobInfo& job) const { return Vote(job_enqueueable_, job); }

void Session::JobEnqueued(const JobInfo& job) const {
  for (const auto& tier : job_enqueued_)
    for (const auto& fn : tier) fn(job);
}

bool Session::QueueBindingsAdmit(const JobInfo& job) const {
  std::optional<std::string> refusal = binding_limits_->EnqueueRefusal(job);
  if (refusal) Explain(job, std::move(*refusal));
  return !refusal;
}

void Session::SetInqueue(JobInfo& job) {
  binding_limits_->Enqueued(job);
  job.SetPhase("Inqueue");
}

bool Session::Overused(const QueueInfo& q) const { return AnyTrue(overused_, q); }

bool Session::Allocatable(const QueueInfo& q, const TaskInfo& t) const {
  return !binding_limits_->AllocateRefusal(t) && AllTrue(allocatable_, q, t);
}

std::optional<std::string> Session::QueueBindingRefusal(const TaskInfo& t) const {
  return binding_limits_->AllocateRefusal(t);
}

bool Session::Preemptive(const QueueInfo& q, const TaskInfo& t) const { return AllTrue(preemptive_, q, t); }

bool Session::VictimQueueOrder(const QueueInfo& l, const QueueInfo& r, const QueueInfo& preemptor) const {
  if (int c = FirstNonZero(victim_queue_order_, l, r, preemptor)) return c < 0;
  return QueueOrder(r, l);
}

absl::Status Session::PrePredicate(const TaskInfo& t) const {
  for (const auto& tier : pre_predicate_)
    for (const auto& fn : tier) RETURN_IF_ERROR(fn(t));
  return absl::OkStatus();
}

bool Session::Predicate(const TaskInfo& t, const NodeInfo& n, std::vector<std::string>* reasons) const {
  for (const auto& tier : predicate_)
    for (const auto& fn : tier)
      if (fn(t, n, reasons) != Verdict::kFit) return false;
  return true;
}

bool Session::PredicateForPreempt(const TaskInfo& t, const NodeInfo& n) const {
  std::vector<std::string> reasons;
  for (const auto& tier : predicate_)
    for (const auto& fn : tier)
      if (fn(t, n, &reasons) == Verdict::kUnresolvable) return false;
  return true;
}

void Session::NodeScores(const TaskInfo& t, absl::Span<NodeInfo* const> nodes,
                         std::vector<double>* scores) const {
  scores->assign(nodes.size(), 0.0);
  for (const auto& tier : node_order_)
    for (const auto& fn : tier)
      for (size_t i = 0; i < nodes.size(); ++i) (*scores)[i] += fn(t, *nodes[i]);
  for (const auto& tier : batch_node_order_)
    for (const auto& fn : tier) fn(t, nodes, scores);
}

bool Session::HasNodeOrder() const {
  for (const auto& tier : node_order_)
    if (!tier.empty()) return true;
  for (const auto& tier : batch_node_order_)
    if (!tier.empty()) return true;
  return false;
}

bool Session::NodeLocal(const TaskInfo& t) const {
  for (const auto& fn : node_local_)
    if (!fn(t)) return false;
  return true;
}

void Session::OrderVictims(const TaskInfo& preemptor, std::vector<TaskInfo*>* victims) const {
  const QueueInfo* preemptor_queue = preemptor.job ? FindQueue(preemptor.job->queue) : nullptr;
  auto first = [&](const TaskInfo* l, const TaskInfo* r) {
    if (l->job == r->job) return TaskOrder(*r, *l);
    const QueueInfo* lq = FindQueue(l->job->queue);
    const QueueInfo* rq = FindQueue(r->job->queue);
    if (lq && rq && preemptor_queue && lq != rq) return VictimQueueOrder(*lq, *rq, *preemptor_queue);
    if (JobOrder(*r->job, *l->job)) return true;
    if (JobOrder(*l->job, *r->job)) return false;
    return TaskOrder(*r, *l);
  };
  std::stable_sort(victims->begin(), victims->end(), first);
}

std::vector<TaskInfo*> Session::Preemptable(const TaskInfo& p, const std::vector<TaskInfo*>& c) const {
  return Victims<TaskInfo*>(preemptable_, p, c);
}

std::vector<TaskInfo*> Session::Reclaimable(const TaskInfo& p, const std::vector<TaskInfo*>& c) const {
  return Victims<TaskInfo*>(reclaimable_, p, c);
}

std::vector<TaskInfo*> Session::UnifiedEvictable(const EvictionContext& ctx, const std::vector<TaskInfo*>& c) const {
  return Victims<TaskInfo*>(unified_evictable_, ctx, c);
}

std::vector<TaskInfo*> Session::VictimTasks(const std::vector<TaskInfo*>& candidates) const {
  return FirstTierUnion<TaskInfo*>(victim_tasks_, candidates);
}

// State changes.
void Session::Reserve(TaskInfo* t, const NodeInfo& n) {
  for (const auto& tier : reserve_)
    for (const auto& fn : tier) fn(*t, n);
}

void Session::Unreserve(TaskInfo* t) {
  for (const auto& tier : unreserve_)
    for (const auto& fn : tier) fn(*t);
}

std::optional<GpuGrants> Session::CardChoice(const TaskInfo& t, const NodeInfo& n) const {
  for (const auto& tier : card_choice_)
    for (const auto& fn : tier)
      if (auto grants = fn(t, n)) return grants;
  return std::nullopt;
}

HyperNodeGradients Session::HyperNodeGradient(const TopologyUnit& u, int hypernode, SearchPurpose purpose) const {
  for (const auto& tier : hypernode_gradient_)
    for (const auto& fn : tier)
      if (auto gradients = fn(u, hypernode, purpose)) return *gradients;
  return {{hypernode}};
}

bool Session::SubJobReady(const JobInfo& job, const TopologyUnit& gang) const {
  return job.sub_group_policies.empty() ? JobReady(job) : AllTrue(subjob_ready_, gang);
}

bool Session::SubJobPipelined(const JobInfo& job, const TopologyUnit& gang) const {
  return job.sub_group_policies.empty() ? JobPipelined(job) : Vote(subjob_pipelined_, gang);
}

bool Session::SubJobOrder(const TopologyUnit& l, const TopologyUnit& r) const {
  if (int c = FirstNonZero(subjob_order_, l, r)) return c < 0;
  if (l.match_index != r.match_index) return l.match_index < r.match_index;
  return l.id < r.id;
}

std::vector<double> Session::HyperNodeScores(const TopologyUnit& u, absl::Span<const int> hypernodes) const {
  std::vector<double> scores(hypernodes.size(), 0.0);
  for (const auto& tier : hypernode_order_)
    for (const auto& fn : tier) fn(u, hypernodes, &scores);
  return scores;
}

void Session::KeepAllocatedAtOpen(const TaskInfo& t) {
  if (t.job) allocated_at_open_.try_emplace(t.job, t.job->allocated);
}

const Resource& Session::AllocatedAtOpen(const JobInfo& job) const {
  auto it = allocated_at_open_.find(&job);
  return it != allocated_at_open_.end() ? it->second : job.allocated;
}

absl::Status Session::AllocateTask(TaskInfo* t, NodeInfo* n) {
  return Place(t, n, TaskStatus::kAllocated, /*refusable=*/true);
}

absl::Status Session::PipelineTask(TaskInfo* t, NodeInfo* n) {
  return Place(t, n, TaskStatus::kPipelined, /*refusable=*/true);
}

absl::Status Session::Place(TaskInfo* t, NodeInfo* n, TaskStatus s, bool refusable) {
  TaskStatus before = t->status;
  NodeInfo* was_on = t->node;
  KeepAllocatedAtOpen(*t);
  Reserve(t, *n);
  PlaceTask(t, n, s);
  touched_.push_back(t);
  TaskMoved(*t, before);
  refusable_ = refusable;
  Notify(on_allocate_, *t);
  refusable_ = false;
  if (!refusal_) return absl::OkStatus();
  // Volcano's Statement.Allocate / Pipeline roll back at once (unallocate),
  // not as a Discard: the task does not count as discarded.
  absl::Status refused = absl::FailedPreconditionError(*refusal_);
  refusal_.reset();
  Unplace(t, before, was_on);
  return refused;
}

void Session::EvictTask(TaskInfo* t) {
  KeepAllocatedAtOpen(*t);
  TaskStatus before = t->status;
  evicted_.emplace_back(t, before);
  SetTaskStatus(t, TaskStatus::kReleasing);
  TaskMoved(*t, before);
  Notify(on_deallocate_, *t);
}

void Session::RestoreTask(TaskInfo* t, TaskStatus s, NodeInfo* n) {
  if (t->status == TaskStatus::kAllocated) discarded_[t->job].insert(t);
  Unplace(t, s, n);
}

void Session::Unplace(TaskInfo* t, TaskStatus s, NodeInfo* n) {
  KeepAllocatedAtOpen(*t);
  TaskStatus before = t->status;
  bool was_allocated = before != TaskStatus::kReleasing;
  PlaceTask(t, n, s);
  if (!n) Unreserve(t);
  TaskMoved(*t, before);
  // Undoing an allocation frees; undoing an eviction takes back.
  Notify(was_allocated ? on_deallocate_ : on_allocate_, *t);
}

void Session::TaskMoved(const TaskInfo& t, TaskStatus before) {
  binding_limits_->StatusChanged(t, before);
  job_orders_->StatusChanged(t, before);
}

void Session::Bind(TaskInfo* t) {
  cache_.AssumeBind(t);
  binds_.emplace_back(t->key, t->node_name);
  if (!t->gpu_grants.empty())
    bind_annotations_[t->key] = GpuBindAnnotations(t->gpu_grants, t->node_name, opts_.now_ms / 1000);
  if (!t->volume_choices.empty()) volume_binds_[t->key] = t->volume_choices;
}

void Session::RecordEviction(TaskInfo* t) {
  cache_.AssumeEvict(t);
  evictions_.push_back(t->key);
}

void Session::AllocateAndDispatch(TaskInfo* t, NodeInfo* n) {
  // Volcano's Session.Allocate does not read the handlers' errors.
  Place(t, n, TaskStatus::kAllocated, /*refusable=*/false).IgnoreError();
  if (!JobReady(*t->job)) return;
  for (const auto& [key, task] : t->job->tasks)
    if (task->status == TaskStatus::kAllocated) Bind(task);
}

void Session::NoteSkipped(const TaskInfo& t, std::string reason) { skipped_[t.key] = std::move(reason); }

// Fit errors.
void Session::SetFitErrors(const TaskInfo& t, FitErrors errors) {
  JobFits& fits = fit_errors_[t.job];
  fits.by_task[t.key] = std::move(errors);
  fits.first_by_role.try_emplace(t.role, t.key);
}

const FitErrors* Session::FindFitErrors(const TaskInfo& t) const {
  auto j = fit_errors_.find(t.job);
  if (j == fit_errors_.end()) return nullptr;
  auto it = j->second.by_task.find(t.key);
  return it == j->second.by_task.end() ? nullptr : &it->second;
}

const FitErrors* Session::RoleFitErrors(const TaskInfo& t) const {
  if (t.role.empty()) return nullptr;  // Volcano caches only tasks with a role
  auto j = fit_errors_.find(t.job);
  if (j == fit_errors_.end()) return nullptr;
  auto first = j->second.first_by_role.find(t.role);
  return first == j->second.first_by_role.end() ? nullptr : &j->second.by_task.at(first->second);
}

// Volcano's JobInfo.NeedContinueAllocating: after a task fits no node, keep
// allocating the job's other tasks only if the gang can still be met.
// O(1) for jobs without minTaskMember.
bool Session::NeedContinueAllocating(const JobInfo& job) const {
  if (job.min_available == static_cast<int>(job.tasks.size())) return false;
  if (job.min_task_member.empty()) return true;
  auto j = fit_errors_.find(&job);
  if (j == fit_errors_.end()) return true;
  const auto& failed = j->second.first_by_role;
  int min_total = 0;
  for (const auto& [role, n] : job.min_task_member) min_total += n;
  if (job.min_available < min_total) {
    int left = 0;
    for (const auto& [key, t] : job.tasks)
      if (t->status == TaskStatus::kPending && !failed.contains(t->role)) ++left;
    return job.ReadyTaskNum() + left >= job.min_available;
  }
  std::map<std::string, int> allocated;
  for (const auto& [key, t] : job.tasks)
    if (In(t->status, kAllocatedMask | Mask(TaskStatus::kSucceeded)) ||
        (t->status == TaskStatus::kPending && t->best_effort))
      ++allocated[t->role];
  for (const auto& [role, first] : failed) {
    auto it = job.min_task_member.find(role);
    if (it == job.min_task_member.end() || it->second == 0) continue;
    if (allocated[role] < it->second) return false;
  }
  return true;
}

void Session::UpdatePodGroupCondition(JobInfo* job, const PodGroupCondition& c) {
  if (c.type == "Unschedulable" && c.status == "True") {
    gang_unschedulable_.emplace_back(job, c.message);
    unschedulable_now_.insert(job);
  }
  auto old = std::find_if(job->conditions.begin(), job->conditions.end(),
                          [&](const PodGroupCondition& o) { return o.type == c.type; });
  // Changed only in time and transition ID: not rewritten (Volcano's JobUpdater
  // skips such updates), so it keeps its old stamps.
  if (old != job->conditions.end() && old->status == c.status && old->reason == c.reason &&
      old->message == c.message)
    return;
  open_conditions_.try_emplace(job, job->conditions);  // as at open, for RollBack
  if (now_stamp_.empty()) now_stamp_ = FormatTimestamp(opts_.now_ms);
  PodGroupCondition stamped = c;
  stamped.transition_id = opts_.uid;
  stamped.last_transition_time = now_stamp_;
  if (old != job->conditions.end()) {
    *old = std::move(stamped);
  } else {
    job->conditions.push_back(std::move(stamped));
  }
}

}  // namespace volcanic
