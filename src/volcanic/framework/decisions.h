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
};

}  // namespace volcanic
