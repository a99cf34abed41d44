// One scheduling session (Volcano's framework.Session, reference §4.1).
//
// Promises: Open() builds the configured plugins and lets them register
// callbacks; actions then read the cluster through the session and change it
// only through Statements (or Allocate for backfill); Close() writes PodGroup
// and queue status, undoes what was not committed (allocations and
// pipelines of uncommitted statements) and returns the Decisions.
// A plugin that fails (Fail(), e.g. a Python plugin that raised) stops the
// session: no further action runs, no plugin is closed, and Close() undoes
// everything the session did to the cache, commits included.
// Cost: opening is O(jobs + nodes) (no copy of the cluster: the session
// works on the Cache in place); the combination rules are tiers.h.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/types/span.h"
#include "volcanic/cache/cache.h"
#include "volcanic/framework/conf.h"
#include "volcanic/framework/decisions.h"
#include "volcanic/framework/fit_errors.h"
#include "volcanic/framework/node_search.h"
#include "volcanic/framework/extension_points.h"
#include "volcanic/framework/plugin.h"
#include "volcanic/framework/plugin_handle.h"
#include "volcanic/framework/queue_binding_limits.h"
#include "volcanic/framework/queue_job_order.h"
#include "volcanic/framework/registry.h"
#include "volcanic/framework/tiers.h"
#include "volcanic/framework/topology.h"

namespace volcanic {

class NodeSearch;

struct SessionOptions {
  int64_t now_ms = 0;
  std::string uid = "session";
  // Report only PodGroup and queue statuses that differ from what the objects
  // say now (what Volcano's status updater writes), not every one.
  bool changed_only = false;
  // Where node answers are kept from one session to the next (a Scheduler's);
  // nullptr: this session's own.
  NodeSearch::Memory* node_memory = nullptr;
  // Time the plugins' callbacks and fill Decisions::plugin_timings. Without,
  // callbacks are called unwrapped and no timings are built: a loop that does
  // not read them saves about as much as a small session's close.
  bool timings = true;
  // Collect Decisions::metrics (Volcano's scheduler metrics) as the plugins
  // and actions go; without, Session::metrics() is nullptr and nothing is kept.
  bool metrics = false;
  FeatureGates features;
};

class Session {
 public:
  // Plugins and actions are built from `registry` by the names in `conf`.
  Session(Cache& cache, const SchedulerConf& conf, SessionOptions opts,
          const Registry& registry = Registry::Builtins());
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  absl::Status Open();
  void RunActions(Decisions* out);
  void Close(Decisions* out);

  // The cluster as the session sees it.
  Cache& cache() { return cache_; }
  const SchedulerConf& conf() const { return conf_; }
  // Ready nodes, by name: the cache's own list (no node comes or goes while a
  // session runs, and copying it cost a twentieth of a session).
  const std::vector<NodeInfo*>& nodes() const { return *nodes_; }
  // Schedulable jobs by key, in key order (views into the cache's keys: no copies).
  const std::vector<std::pair<std::string_view, JobInfo*>>& jobs() const { return jobs_; }
  const absl::btree_map<std::string, const QueueInfo*>& queues() const { return queues_; }
  const QueueInfo* FindQueue(const std::string& name) const;
  const Resource& total_resource() const { return total_resource_; }
  int64_t now_ms() const { return opts_.now_ms; }
  // A decision of this session would change at `ms` (a deadline passing)
  // though nothing else changed: the earliest such instant after now is
  // reported in Decisions::wake_at_ms, so a loop that skips idle periods
  // still runs a session then. Instants at or before now are ignored. A
  // request, not a change of the session: read-only views may make it.
  void WakeAt(int64_t ms) const {
    if (ms > opts_.now_ms && (!wake_at_ms_ || ms < *wake_at_ms_)) wake_at_ms_ = ms;
  }
  const std::string& uid() const { return opts_.uid; }
  const FeatureGates& features() const { return opts_.features; }
  NodeSearch& node_search() { return *node_search_; }
  // Counts changes to node accounting: caches keyed by it stay exact.
  uint64_t changes() const;

  // A plugin failed: keeps the first error (a PluginError status naming the
  // plugin). Plugins that fail return a neutral answer and are not called
  // again; the session then stops (see above).
  void Fail(absl::Status error);
  bool failed() const { return !failure_.ok(); }
  const absl::Status& failure() const { return failure_; }

  // Combined extension points (tiers.h rules; orders fall back to Volcano's
  // creation-time / UID / pod-index rules so they are total). Jobs of one
  // queue with a job order of its own go by it instead (queue_job_order.h).
  bool JobOrder(const JobInfo& l, const JobInfo& r) const;  // l goes first
  bool TaskOrder(const TaskInfo& l, const TaskInfo& r) const;
  bool QueueOrder(const QueueInfo& l, const QueueInfo& r) const;
  // Volcano's JobValid: the first failed validation, or nullopt when valid.
  std::optional<ValidateResult> JobInvalid(const JobInfo& job) const;
  bool JobReady(const JobInfo& job) const;
  bool JobPipelined(const JobInfo& job) const;
  bool JobStarving(const JobInfo& job) const;
  bool JobEnqueueable(const JobInfo& job) const;
  void JobEnqueued(const JobInfo& job) const;
  // Whether the job's queue's QueueBindings let it be enqueued now
  // (queue_binding_limits.h); a refusal is explained. Any job, with
  // minResources or not: the bindings are the cluster's rule, not a plugin's.
  bool QueueBindingsAdmit(const JobInfo& job) const;
  // Pending -> Inqueue, counted against its QueueBindings' limits.
  void SetInqueue(JobInfo& job);
  bool Overused(const QueueInfo& q) const;
  // The QueueBindings' maxRunningPods, then the plugins' vote.
  bool Allocatable(const QueueInfo& q, const TaskInfo& t) const;
  // Why the task's QueueBindings refuse it resources now, or nullopt.
  std::optional<std::string> QueueBindingRefusal(const TaskInfo& t) const;
  // Whether the queue may take resources from others for the task (reclaim).
  bool Preemptive(const QueueInfo& q, const TaskInfo& t) const;
  // Victims of queue l go before those of queue r when a task of queue
  // `preemptor` reclaims; falls back to the reverse of QueueOrder.
  bool VictimQueueOrder(const QueueInfo& l, const QueueInfo& r, const QueueInfo& preemptor) const;
  absl::Status PrePredicate(const TaskInfo& t) const;
  bool Predicate(const TaskInfo& t, const NodeInfo& n, std::vector<std::string>* reasons) const;
  // Volcano's PredicateForPreemptAction: only kUnresolvable failures count.
  bool PredicateForPreempt(const TaskInfo& t, const NodeInfo& n) const;
  // Σ node-order scores + Σ batch scores over `nodes`, into (*scores)[i].
  void NodeScores(const TaskInfo& t, absl::Span<NodeInfo* const> nodes, std::vector<double>* scores) const;
  bool NodeLocal(const TaskInfo& t) const;
  // Whether every plugin with node hooks answers the same in later sessions
  // (Plugin::AnswersOutliveSession): node answers may then be kept.
  bool AnswersOutliveSession() const { return answers_outlive_session_; }
  std::vector<TaskInfo*> Preemptable(const TaskInfo& preemptor, const std::vector<TaskInfo*>& candidates) const;
  std::vector<TaskInfo*> Reclaimable(const TaskInfo& reclaimer, const std::vector<TaskInfo*>& candidates) const;
  std::vector<TaskInfo*> UnifiedEvictable(const EvictionContext& ctx, const std::vector<TaskInfo*>& candidates) const;
  // The tasks the plugins want evicted (shuffle), by the kFirstTierUnion rule.
  std::vector<TaskInfo*> VictimTasks(const std::vector<TaskInfo*>& candidates) const;
  bool HasNodeOrder() const;
  // Volcano's BuildVictimsPriorityQueue as a sort, first evicted first: tasks
  // of one job in reverse TaskOrder, tasks of jobs in different queues by
  // VictimQueueOrder, otherwise reverse JobOrder.
  void OrderVictims(const TaskInfo& preemptor, std::vector<TaskInfo*>* victims) const;

  // State changes, used by Statement and backfill. Each fires the plugins'
  // event handlers and tells the node search which node changed. Allocate
  // and Pipeline fail (FailedPrecondition, the first refusal's reason) when
  // an on_allocate handler refused the placement: it is undone then, the
  // task Pending off the node as before (extension_points.h).
  absl::Status AllocateTask(TaskInfo* t, NodeInfo* n);  // Pending -> Allocated on n
  absl::Status PipelineTask(TaskInfo* t, NodeInfo* n);  // Pending -> Pipelined on n
  void EvictTask(TaskInfo* t);                          // -> Releasing
  void RestoreTask(TaskInfo* t, TaskStatus s, NodeInfo* n);  // undo of the above
  // Called by an on_allocate handler: refuses the placement being told of.
  // Ignored where a placement cannot be refused (an undone eviction,
  // backfill's allocation); of several refusals the first reason is kept.
  void RefusePlacement(std::string reason) {
    if (refusable_ && !refusal_) refusal_ = std::move(reason);
  }
  // Says why `job` is held back, where a plugin or action decides it (a vote
  // against enqueueing it, say): the reasons of a job still waiting when the
  // session closes are reported (Decisions::why), in the order given, each once.
  void Explain(const JobInfo& job, std::string reason) const;
  bool Explained(const JobInfo& job) const { return explained_.contains(&job); }
  // The first reason Explain was given for `job` (the most binding), or nullptr.
  const std::string* TopExplanation(const JobInfo& job) const {
    auto it = explained_.find(&job);
    return it == explained_.end() || it->second.empty() ? nullptr : &it->second.front();
  }
  // A job's allocated as this session opened, whatever the session did since:
  // for plugins that take a job's allocation when they first need it, rather
  // than copying every job's at open (Volcano's drf does).
  const Resource& AllocatedAtOpen(const JobInfo& job) const;
  void Bind(TaskInfo* t);                        // commit of an allocation
  // Network topology: the HyperNodes and the gangs' state (topology.h).
  SessionTopology& topology() { return *topology_; }
  const SessionTopology& topology() const { return *topology_; }
  // The first plugin's gradients, else {{hypernode}} (Volcano's
  // HyperNodeGradientForJobFn / ForSubJobFn).
  HyperNodeGradients HyperNodeGradient(const TopologyUnit& u, int hypernode, SearchPurpose purpose) const;
  // A gang of the job: for a job without subGroupPolicy, JobReady and
  // JobPipelined; else the plugins' SubJobReady and SubJobPipelined.
  bool SubJobReady(const JobInfo& job, const TopologyUnit& gang) const;
  bool SubJobPipelined(const JobInfo& job, const TopologyUnit& gang) const;
  // l goes first; falls back to the first matched value, then the id.
  bool SubJobOrder(const TopologyUnit& l, const TopologyUnit& r) const;
  // Σ of the plugins' scores per candidate (Volcano's HyperNodeOrderMapFn, summed).
  std::vector<double> HyperNodeScores(const TopologyUnit& u, absl::Span<const int> hypernodes) const;
  // The first plugin's choice of vGPU cards for the task on the node (the
  // CardChoice point), if any.
  std::optional<GpuGrants> CardChoice(const TaskInfo& t, const NodeInfo& n) const;
  // How long the loop waits for the volumes of the pods it binds to be bound
  // (Decisions::volume_bind_timeout_s; the predicates plugin's argument).
  void SetVolumeBindTimeout(int64_t seconds) { volume_bind_timeout_s_ = seconds; }
  void RecordEviction(TaskInfo* t);              // commit of an eviction
  // The task's queue-allocation gate is to be removed (Volcano's
  // SchGateManager.Enqueue): reported in Decisions::ungate, for the loop to
  // write. Not a change of the cache: the pod's update brings it.
  void Ungate(const TaskInfo& t) { ungates_.push_back(t.key); }
  // Volcano's Session.Allocate (backfill): allocate and bind once the job is ready.
  void AllocateAndDispatch(TaskInfo* t, NodeInfo* n);

  // Why a task was not tried (e.g. its queue had no room); reported when
  // nothing better explains it.
  void NoteSkipped(const TaskInfo& t, std::string reason);
  // Why tasks did not fit, per job (Volcano's job.NodesFitErrors).
  void SetFitErrors(const TaskInfo& t, FitErrors errors);
  const FitErrors* FindFitErrors(const TaskInfo& t) const;
  // Forgets the job's fit errors (Volcano's ResetFitErr): each HyperNode a
  // gang is tried in starts clean.
  void ClearFitErrors(const JobInfo& job) {
    fit_errors_.erase(&job);
    job_fit_errors_.erase(&job);
  }
  // The fit errors of the first task of t's role (a non-empty role) that
  // fit no node in this session: Volcano skips the rest of the role.
  const FitErrors* RoleFitErrors(const TaskInfo& t) const;
  bool NeedContinueAllocating(const JobInfo& job) const;
  // What kept a whole job back (Volcano's JobInfo.JobFitErrors), told as the
  // origin reason of its fit error ahead of any task's; a job whose queue
  // does not exist says so without it.
  void SetJobFitError(const JobInfo& job, std::string reason) { job_fit_errors_[&job] = std::move(reason); }

  // Where plugins and actions put what they measure for Volcano's metrics;
  // nullptr when the session does not collect them (SessionOptions::metrics).
  SessionMetrics* metrics() { return opts_.metrics ? &metrics_ : nullptr; }

  // A queue's deserved resources as the queue-sharing plugin computed them,
  // reported in the decisions beside status.allocated.
  void SetDeserved(const std::string& queue, Resource deserved) { deserved_[queue] = std::move(deserved); }

  // Volcano's UpdatePodGroupCondition: replaces the condition of the same
  // type, else appends. Stamped with this session's uid and time.
  void UpdatePodGroupCondition(JobInfo* job, const PodGroupCondition& c);
  // Volcano's JobInfo.FitError(): the job's task histogram, its pending
  // tasks' reasons and the first task's fit errors.
  std::string JobFitError(const JobInfo& job) const;
  // Pending tasks of the job that were allocated in this session and given
  // back (Volcano's last transaction): schedulable in gang messages.
  int DiscardedPendingNum(const JobInfo& job) const;

 private:
  // The Reserve and Unreserve points: what a task placed on a node takes,
  // and gives back when it is taken off.
  void Reserve(TaskInfo* t, const NodeInfo& n);
  void Unreserve(TaskInfo* t);
  // Allocate or pipeline (status s), refused or not (RefusePlacement).
  absl::Status Place(TaskInfo* t, NodeInfo* n, TaskStatus s, bool refusable);
  // Puts the task back to status s on node n (nullptr: off any node), telling the handlers.
  void Unplace(TaskInfo* t, TaskStatus s, NodeInfo* n);
  // A task's status changed from `before`: the accounts kept beside the plugins
  // (QueueBinding limits, per-queue job orders) follow.
  void TaskMoved(const TaskInfo& t, TaskStatus before);
  template <typename F>
  TieredRefs<F> Collect(F PluginSlot::*field, const char* flag) const;
  void CollectCallbacks();
  // Runs a plugin's session open or close, timed when timings are on.
  template <typename F>
  void TimedHook(PluginSlot& slot, HookKind kind, F call);
  void WriteTimings(Decisions* out) const;
  void ResolvePriorities();
  void ClosePlugins();
  void CountWorkloads();  // SessionMetrics::queue_podgroups and queue_tasks
  void CountScheduled(const Decisions& d);  // SessionMetrics::scheduled
  void WritePodGroupStatus(Decisions* out);
  void ReportPodGroupEvent(std::string_view key, JobInfo* job, bool status_changed, Decisions* out);
  void WriteQueueStatus(Decisions* out);
  void RevertUncommitted();
  void RollBack();
  void WriteUnschedulable(Decisions* out);

  Cache& cache_;
  const SchedulerConf& conf_;
  SessionOptions opts_;
  const std::vector<NodeInfo*>* nodes_;
  std::vector<std::pair<std::string_view, JobInfo*>> jobs_;
  absl::btree_map<std::string, const QueueInfo*> queues_;
  // FindQueue's last answer: plugins and actions look each job's queue up in
  // turn, and most jobs share a few queues.
  mutable const QueueInfo* last_found_queue_ = nullptr;
  Resource total_resource_;
  const Registry& registry_;
  std::vector<std::unique_ptr<PluginSlot>> slots_;
  std::vector<std::pair<std::unique_ptr<Action>, std::string>> actions_;

  // Combined callbacks, one per extension point, built after OnSessionOpen.
#define VOLCANIC_TIERED(Name, field, Fn, flag, combination, python) TieredRefs<Fn> field##_;
  VOLCANIC_EXTENSION_POINTS(VOLCANIC_TIERED)
#undef VOLCANIC_TIERED
  std::vector<NodeLocalFn> node_local_;
  // Calls every on_allocate (or on_deallocate) callback with the task.
  void Notify(const TieredRefs<TaskEventFn>& handlers, const TaskInfo& t) const;

  bool answers_outlive_session_ = true;
  std::unique_ptr<NodeSearch> node_search_;
  std::unique_ptr<SessionTopology> topology_;
  std::optional<QueueBindingLimits> binding_limits_;  // from Open
  std::optional<QueueJobOrders> job_orders_;          // from Open
  struct JobFits {
    absl::btree_map<std::string, FitErrors> by_task;     // task key -> errors
    std::map<std::string, std::string> first_by_role;  // role -> first failing task key
  };
  absl::flat_hash_map<const JobInfo*, JobFits> fit_errors_;
  absl::flat_hash_map<const JobInfo*, std::string> job_fit_errors_;
  std::vector<TaskInfo*> touched_;  // tasks this session allocated or pipelined
  // Before a task's change: its job's allocated, if this session has not changed the job yet.
  void KeepAllocatedAtOpen(const TaskInfo& t);
  absl::flat_hash_map<const JobInfo*, Resource> allocated_at_open_;  // jobs this session changed
  std::vector<std::pair<TaskInfo*, TaskStatus>> evicted_;  // evictions and the status before
  // What RollBack restores: the jobs' phases at open (parallel to jobs_), and
  // the conditions of each job before this session first changed them.
  std::vector<std::string> open_phases_;
  absl::flat_hash_map<JobInfo*, std::vector<PodGroupCondition>> open_conditions_;
  absl::Status failure_;
  // Allocations undone by Discard, by job.
  absl::flat_hash_map<const JobInfo*, absl::flat_hash_set<const TaskInfo*>> discarded_;
  absl::flat_hash_set<const JobInfo*> unschedulable_now_;  // Unschedulable set this session
  std::string now_stamp_;                                   // opts_.now_ms as RFC 3339
  std::vector<std::pair<const JobInfo*, std::string>> gang_unschedulable_;  // job -> message
  absl::btree_map<std::string, std::string> skipped_;  // task key -> reason
  std::vector<std::pair<std::string, std::string>> binds_;
  std::map<std::string, Labels> bind_annotations_;
  std::map<std::string, VolumeChoices> volume_binds_;
  int64_t volume_bind_timeout_s_ = 0;
  std::vector<std::string> evictions_;
  std::vector<std::string> ungates_;
  std::map<std::string, Resource> deserved_;
  SessionMetrics metrics_;
  mutable std::optional<int64_t> wake_at_ms_;
  mutable absl::flat_hash_map<const JobInfo*, std::vector<std::string>> explained_;  // Explain
  void WriteWhy(Decisions* out) const;
  std::optional<std::string> FirstUnplaced(const JobInfo& job, const Decisions& out) const;
  // While on_allocate handlers are told of a placement that may be refused,
  // and the first refusal.
  bool refusable_ = false;
  std::optional<std::string> refusal_;
};

}  // namespace volcanic
