// What one session decided, in the shape of volcanic.Decisions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "volcanic/api/resource.h"
#include "volcanic/api/types.h"

namespace volcanic {

// An Event to record on a PodGroup (involvedObject), as Volcano's
// SchedulerCache.RecordJobStatusEvent records one.
struct PodGroupEvent {
  std::string type, reason, message;
};

struct PodGroupStatusOut {
  std::string phase;
  std::vector<PodGroupCondition> conditions;
  int running = 0, succeeded = 0, failed = 0;
};

// The time a plugin's callbacks of one extension point took in a session
// (estimated from a sample of the calls: plugin_handle.h), and the calls.
struct HookTime {
  int64_t nanos = 0;
  uint64_t calls = 0;
};

// What a session's plugins and actions measured for Volcano's scheduler
// metrics (pkg/scheduler/metrics), where Volcano's plugins update them:
// collected only when the session is asked to (SessionOptions::metrics).
// Resources in the engine's units, which are Volcano's (cpu millicores,
// memory bytes, other resources milli-units).
struct QueueMetrics {
  // Each set by the plugin that computes it (proportion, capacity).
  std::optional<Resource> allocated, request, deserved, capability, real_capability, inqueue;
  std::optional<double> share;
  std::optional<int64_t> weight;
  std::optional<bool> overused;
};

// A job some of whose tasks the session bound.
struct ScheduledJob {
  std::string queue;
  int64_t creation_ms = 0;
  int tasks = 0;  // tasks bound this session
};

struct SessionMetrics {
  std::map<std::string, QueueMetrics> queues;
  // queue -> PodGroup phase / task status -> count, as the session opened
  // (a job counts in its own queue only); every queue, zeros included.
  std::map<std::string, std::map<std::string, int>> queue_podgroups, queue_tasks;
  std::map<std::string, ScheduledJob> scheduled;   // job key -> what was bound of it
  std::map<std::string, double> job_shares;        // job key -> drf's dominant share
  std::map<std::string, int> unschedulable_tasks;  // job key -> tasks short of its gang (gang)
  std::optional<int> unschedulable_jobs;           // jobs not ready (gang)
  int preemption_attempts = 0;                     // preemptors tried (preempt)
  std::vector<int> preemption_victims;             // victims of each preemption, in order
  // plugin -> wall seconds of its OnSessionOpen and OnSessionClose.
  std::map<std::string, std::pair<double, double>> plugin_session_seconds;
  double open_seconds = 0;                         // the session's open, snapshot included
};

// Why a job waits, as the session that left it waiting found it (foresight,
// docs/foresight.md): the reasons, most binding first (what kept it from being
// enqueued, then its gang, then its pods' node reasons), its place among its
// queue's waiting jobs in the session's job order, and its queue's place
// among the queues with waiting jobs in the queue order (both 1-based).
struct JobWhy {
  std::string queue;
  std::vector<std::string> reasons;
  int position = 0, queue_position = 0;
};

struct Decisions {
  std::vector<std::pair<std::string, std::string>> binds;      // pod key -> node, in bind order
  std::map<std::string, Labels> bind_annotations;              // pod key -> annotations its binding carries
  // pod key -> what binding its claims takes before the pod is bound (a PV
  // for a claim, or provisioning on the pod's node), and how long the loop
  // waits for the PV controller to complete it (volumebinding's bindTimeoutSeconds).
  std::map<std::string, VolumeChoices> volume_binds;
  int64_t volume_bind_timeout_s = 0;
  std::vector<std::string> evictions;                          // pod keys, in eviction order
  // Pod keys whose queue-allocation gate (scheduling.volcano.sh/queue-allocation-gate)
  // is to be removed, in the order decided (FeatureGates::queue_allocation_gate).
  std::vector<std::string> ungate;
  std::vector<std::pair<std::string, std::string>> pipelined;  // pod key -> node
  std::map<std::string, PodGroupStatusOut> podgroups;          // job key -> status
  std::map<std::string, Resource> queue_allocated;             // queue -> allocated
  std::map<std::string, Resource> queue_deserved;              // queue -> deserved, if a plugin computed it
  std::map<std::string, std::string> unschedulable;            // pod key -> reason
  // job key -> the Event its PodGroup gets; only one that differs from the
  // last reported for the job (an unchanged one is not sent again).
  std::map<std::string, PodGroupEvent> podgroup_events;
  std::map<std::string, JobWhy> why;  // job key -> why it waits, for every job still waiting
  bool deferred = false;  // pod conditions held back for the next session (a growing gang)
  // Some job waits to be enqueued or has a pod waiting for a node, once the
  // session closed: a session after one that changed PodGroup phases may then
  // decide otherwise (an enqueue counts the phases), though nothing else changed.
  bool pending = false;
  // The earliest instant after the session (ms since the epoch) at which a
  // decision could change with time alone (Session::WakeAt), if any.
  std::optional<int64_t> wake_at_ms;
  std::vector<std::pair<std::string, double>> action_seconds;  // action -> wall seconds
  // plugin -> extension point (HookKindName) -> time, for the points it was called on.
  std::map<std::string, std::map<std::string, HookTime>> plugin_timings;
  SessionMetrics metrics;  // empty unless asked for
};

}  // namespace volcanic
