// The scheduler's view of cluster objects: tasks (pods), nodes, jobs
// (PodGroups) and queues, as Volcano's pkg/scheduler/api models them
// (reference §4.1). Objects are built by parse.h from Kubernetes JSON and
// owned by the Cache; sessions mutate task status and node accounting in
// place and undo what they do not commit (see framework/statement.h).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/btree_map.h"
#include "nlohmann/json.hpp"
#include "volcanic/api/job_order.h"
#include "volcanic/api/namespace_policy.h"
#include "volcanic/api/placement.h"
#include "volcanic/api/queue_sums.h"
#include "volcanic/api/resource.h"
#include "volcanic/api/topology.h"
#include "volcanic/api/vgpu.h"
#include "volcanic/api/volumes.h"

namespace volcanic {

// Volcano's TaskStatus (api/types.go); bit flags so sets are masks.
enum class TaskStatus : uint16_t {
  kPending = 1 << 0,
  kAllocated = 1 << 1,
  kPipelined = 1 << 2,
  kBinding = 1 << 3,
  kBound = 1 << 4,
  kRunning = 1 << 5,
  kReleasing = 1 << 6,
  kSucceeded = 1 << 7,
  kFailed = 1 << 8,
  kUnknown = 1 << 9,
};
inline constexpr int kTaskStatusCount = 10;
int StatusIndex(TaskStatus s);  // 0..9
const char* StatusName(TaskStatus s);  // "Pending", "Allocated", ...

inline constexpr uint16_t Mask(TaskStatus s) { return static_cast<uint16_t>(s); }
inline constexpr uint16_t kAllocatedMask = Mask(TaskStatus::kBound) | Mask(TaskStatus::kBinding) |
                                           Mask(TaskStatus::kRunning) | Mask(TaskStatus::kAllocated);
// Tasks that hold (or, pipelined, are about to hold) a node's resources.
inline constexpr uint16_t kHoldingMask = kAllocatedMask | Mask(TaskStatus::kPipelined);
inline constexpr uint16_t kCompletedMask = Mask(TaskStatus::kSucceeded) | Mask(TaskStatus::kFailed);
inline constexpr uint16_t kScheduledMask = Mask(TaskStatus::kRunning) | Mask(TaskStatus::kBound) |
                                           Mask(TaskStatus::kFailed) | Mask(TaskStatus::kSucceeded);
inline constexpr uint16_t kPreemptableMask = Mask(TaskStatus::kBound) | Mask(TaskStatus::kRunning);
inline bool In(TaskStatus s, uint16_t mask) { return (Mask(s) & mask) != 0; }

// What this scheduler decided about a pod and assumes until the API confirms.
enum class Assumed : uint8_t { kNone, kBind, kEvict };

struct JobInfo;
struct NodeInfo;

// What the cache keeps over its Ready nodes as their accounting changes: the
// log of changes (each a node's index among them, repeats included, in order)
// and the sum of their `used`.
struct ReadyTotals {
  std::vector<int> changes;
  Resource used;
};

struct TaskInfo {
  std::string uid, ns, name, key;  // key: "ns/name"
  std::string job_key;             // "ns/podgroup"; empty for other schedulers' pods
  bool implicit_group = false;     // no group annotation: its own group of one
  std::string role;                // task role: annotation volcano.sh/task-spec
  int64_t index = -1;              // pod index for task order, -1 if none
  Resource resreq;                 // pod_requests.h's rule, plus one `pods`
  ResourceNameRefs resource_names;  // the names this pod's object uses
  bool best_effort = false;        // resreq empty (Volcano's IsEmpty)
  int64_t nonzero_cpu = 0, nonzero_mem = 0;  // kube scoring's non-zero requests
  // QoS Guaranteed, and then each container's cpu request (pod_requests.h).
  bool guaranteed = false;
  std::vector<std::pair<std::string, int64_t>> container_cpus;
  int32_t priority = 1;
  std::optional<int32_t> spec_priority;  // spec.priority as written (rescheduling's pod order)
  bool preemptable = true;
  std::string priority_class_name, preemption_policy;
  int64_t creation_ms = 0;
  int64_t start_ms = -1;  // status.startTime; -1 while the pod has not started
  int64_t scheduled_ms = -1;  // its PodScheduled=True condition's lastTransitionTime; -1 if none
  Labels labels, annotations;
  std::shared_ptr<const Placement> placement;
  std::string class_key;           // equal keys: interchangeable for placement
  int32_t class_id = -1;

  TaskStatus status = TaskStatus::kPending;
  std::string node_name;
  // Maintained by the Cache: the job and the node the task is accounted on.
  JobInfo* job = nullptr;
  NodeInfo* node = nullptr;
  // The status and node the last upserted object showed; assumptions go back
  // to these on forget().
  TaskStatus observed_status = TaskStatus::kPending;
  std::string observed_node;
  Assumed assumed = Assumed::kNone;
  bool terminating = false;  // deletionTimestamp set
  bool gated = false;        // spec.schedulingGates not empty: not scheduled yet
  // Its only gate is Volcano's queue-allocation gate, which the scheduler
  // lifts: such a task still reserves its share of an admitted job.
  bool queue_gate_only = false;
  // Gated by some other gate: the job's admission does not reserve for it
  // (Volcano's GetSchGatedPodResources).
  bool SchedulingGated() const { return gated && !queue_gate_only; }
  // Annotated scheduling.volcano.sh/queue-allocation-gate: "true": opted in to
  // have that gate lifted once its queue has room (Volcano's
  // HasQueueAllocationGateAnnotation, pkg/scheduler/api/helpers.go).
  bool queue_gate_opt_in = false;
  // Pending, opted in and no longer gated: its gate was lifted because its
  // queue had room, which it keeps until placed (capacity's reservations).
  bool HoldsQueueRoom() const { return status == TaskStatus::kPending && queue_gate_opt_in && !gated; }
  // vGPU (vgpu.h): what the containers ask, the annotations a fit reads
  // (GpuAnnotations, once here rather than per node tried), and the cards they
  // hold, from the pod's annotation or chosen by the session that placed it.
  std::vector<GpuRequest> gpu_requests;
  Labels gpu_annotations;
  GpuGrants gpu_grants;
  // The PersistentVolumeClaims it uses (volumes.h), and what the session that
  // placed it chose for them, until its placement goes.
  std::vector<PodClaim> claims;
  VolumeChoices volume_choices;
};

// A node's load as the metrics system last reported it (Volcano's
// NodeUsage): percentages of the node's capacity averaged over
// kNodeMetricsPeriod. The usage and rescheduling plugins read it.
struct NodeUsage {
  double cpu = 0, memory = 0;  // percent, 0-100
  int64_t metrics_ms = -1;     // when measured (ms since the epoch); -1: never reported
  bool operator==(const NodeUsage&) const = default;
};
// The one averaging window Volcano's metrics sources report
// (pkg/scheduler/metrics/source NODE_METRICS_PERIOD).
inline constexpr char kNodeMetricsPeriod[] = "10m";

struct NodeInfo {
  std::string name;
  bool has_object = false;  // false: a placeholder for pods bound to an unknown node
  Labels labels, annotations;
  std::vector<Taint> taints;
  bool unschedulable = false;
  bool ready_condition = true;
  Resource allocatable;
  Resource capacity;  // status.capacity (rescheduling's percentages are of it)
  ResourceNameRefs resource_names;  // the names this node's object uses
  int64_t max_pods = 110;
  NodeUsage usage;  // kept by Cache::SetNodeUsage, not by the Node object

  Resource idle, used, releasing, pipelined;
  int pod_count = 0;
  int64_t nonzero_cpu = 0, nonzero_mem = 0;
  std::vector<HostPort> used_ports;
  absl::btree_map<std::string, TaskInfo*> tasks;  // by task key
  uint64_t version = 0;  // bumped on every accounting change
  // The cache's totals over the Ready nodes while this node is one of them
  // (Cache::IndexReadyNodes), kept by Account and Changed.
  ReadyTotals* ready_totals = nullptr;
  int index = -1;        // position among the Ready nodes (Cache::ReadyNodes), -1 if not Ready
  NodeGpus gpus;         // registered vGPU cards and their use by the node's tasks

  // Volcano's NodeInfo.Ready(): the node exists and its Ready condition is
  // not False. A node using more than it has (pods of other schedulers) stays
  // in, as in current Volcano, which only logs it; nothing more fits there.
  bool Ready() const { return has_object && ready_condition; }
  Resource FutureIdle() const { return idle + releasing - pipelined; }
  bool FitsIdle(const Resource& req) const { return req.LessEqual(idle); }
  // req <= FutureIdle without building it; on failure *short_of is the first
  // dimension (by id: cpu, memory, ...) that does not fit.
  bool FitsFutureIdle(const Resource& req, ResourceId* short_of) const;
  void AddTask(TaskInfo* t);     // adds t and accounts it by its status
  void RemoveTask(TaskInfo* t);  // undoes AddTask
  void Account(const TaskInfo& t, int sign);  // accounting only, no membership
  void SetAllocatable(Resource alloc);
  void SetGpus(NodeGpus registered);  // new cards, used by the tasks' grants
  void Changed();  // a new version, logged
};

struct PodGroupCondition {
  std::string type, status, transition_id, last_transition_time, reason, message;
  bool operator==(const PodGroupCondition&) const = default;
};

struct JobInfo {
  std::string key, ns, name, uid;
  bool has_podgroup = false;  // a PodGroup object backs this job
  bool implicit = false;      // the group of one of a pod without a group annotation
  std::string queue = "default";
  std::string priority_class_name;
  int32_t priority = 0;  // resolved from PriorityClasses at session open
  int32_t min_available = 0;
  std::map<std::string, int32_t> min_task_member;
  std::optional<Resource> min_resources;
  // spec.minResources with every name as written (requests.cpu, count/pods,
  // ...), for the resourcequota plugin; nullopt when absent.
  std::optional<QuotaList> quota_request;
  ResourceNameRefs resource_names;  // the names this PodGroup's object uses
  // spec.networkTopology and spec.subGroupPolicy (topology.h).
  std::optional<NetworkTopology> network_topology;
  std::vector<SubGroupPolicy> sub_group_policies;
  std::string phase;  // PodGroup status.phase (sessions change it with SetPhase; an upsert resets it)
  std::vector<PodGroupCondition> conditions;
  // The PodGroup's status as read, to tell what a session changed.
  std::string status_phase;
  std::vector<PodGroupCondition> status_conditions;
  std::array<int32_t, 3> status_counts{};  // status.running, succeeded, failed
  // False once a write of the status a session decided failed (Cache::ForgetStatus):
  // the next session decides it again whatever the fields above say.
  bool status_known = true;
  int64_t creation_ms = 0;
  // The order in which the cache first saw the job (its PodGroup or a pod of
  // it), kept across updates: ties of creationTimestamp (whole seconds) go
  // first come, first served.
  uint64_t arrival = 0;
  bool preemptable = false;
  // Whether gangpreempt and gangreclaim may take its pods: a PodGroup that
  // says volcano.sh/preemptable decides, else yes (Volcano's
  // IsJobPreemptableForGangEviction).
  bool gang_evictable = true;
  Labels labels, annotations;
  // Tasks the last session saw, to tell a gang whose pods are still being
  // created (Session::WriteUnschedulable).
  size_t tasks_seen = 0;
  // The Event last reported for its PodGroup (type, reason and message), so
  // an unchanged one is not reported again (Session::ReportPodGroupEvent).
  std::string last_event;

  absl::btree_map<std::string, TaskInfo*> tasks;  // by task key
  std::array<int, kTaskStatusCount> count{};      // tasks per status
  int pending_best_effort = 0;
  Resource allocated;                              // Σ resreq of allocated tasks
  Resource pending_request;                        // Σ resreq of Pending tasks
  Resource total_request;                          // Σ resreq of all tasks
  Resource gated_request;                          // Σ resreq of SchedulingGated tasks
  int holding_queue_room = 0;                      // tasks that HoldsQueueRoom()
  // Its terms in the cache's per-queue sums; unlinked outside a cache.
  QueueSumsLink queue_sums;

  void AddTask(TaskInfo* t);
  void RemoveTask(TaskInfo* t);
  void Account(const TaskInfo& t, int sign);  // counters and sums only
  // Takes `old`'s tasks with everything Account keeps of them (a new version
  // of the same PodGroup).
  void TakeTasks(JobInfo&& old);
  void SetPhase(std::string_view p);
  // Replaces its terms in its queue's sums by what it is now: called after
  // every change of what they read (tasks, phase, the PodGroup's fields).
  void Recount();
  int Count(uint16_t mask) const {  // called per job many times a session: the set bits only
    int n = 0;
    for (uint32_t m = mask; m != 0; m &= m - 1) n += count[__builtin_ctz(m)];
    return n;
  }
  // Volcano's job_info.go gang arithmetic.
  int ReadyTaskNum() const;    // Bound, Binding, Running, Allocated, Succeeded
  int WaitingTaskNum() const;  // Pipelined
  int ValidTaskNum() const;    // allocated, Succeeded, Pipelined, Pending
  // Releasing tasks still on a node: terminating pods that hold their slots.
  int ReleasingScheduledTaskNum() const;
  bool IsPending() const { return phase.empty() || std::string_view(phase) == "Pending"; }
  // Volcano's DeductSchGatedResources (pkg/scheduler/api/job_info.go): `r`
  // less what its scheduling-gated tasks request, per dimension, not below
  // zero, so gated pods do not hold room that other jobs could be admitted to.
  Resource DeductGated(const Resource& r) const { return gated_request.IsEmpty() ? r : r.SubFloorZero(gated_request); }
};

// Queue spec.affinity (the nodegroup plugin): node group names, as listed.
struct QueueAffinity {
  std::vector<std::string> required, preferred;            // nodeGroupAffinity
  std::vector<std::string> anti_required, anti_preferred;  // nodeGroupAntiAffinity
  bool operator==(const QueueAffinity&) const = default;
};

struct QueueInfo {
  std::string name, uid, parent;
  std::optional<Resource> status_allocated;  // status.allocated as read
  int32_t weight = 1;
  int32_t priority = 0;
  Resource capability = Resource::Infinite();
  Resource deserved, guarantee;
  ResourceNameRefs resource_names;  // the names this Queue's object uses
  bool reclaimable = true;
  std::string state = "Open";
  int64_t creation_ms = 0;
  // Annotations volcano.sh/hierarchy ("root/eng/prod") and
  // volcano.sh/hierarchy-weights ("1/2/8"), read by drf's HDRF; "" if unset.
  std::string hierarchy, hierarchy_weights;
  std::optional<QueueAffinity> affinity;  // nullopt: no spec.affinity
  QueueJobOrder job_order;                // volcanic's per-queue job order (api/job_order.h)
  bool IsOpen() const { return state == "Open"; }
};

struct PriorityClassInfo {
  std::string name;
  int32_t value = 0;
  bool global_default = false;
};

// Changes the task's status, keeping its job's and node's accounting right.
void SetTaskStatus(TaskInfo* t, TaskStatus s);
// Moves the task onto `node` (nullptr: off any node, dropping its vGPU grants)
// with status `s`.
void PlaceTask(TaskInfo* t, NodeInfo* node, TaskStatus s);

}  // namespace volcanic
