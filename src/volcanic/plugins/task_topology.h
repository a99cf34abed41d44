// task-topology (reference §4.6): a job's PodGroup annotations say which of
// its tasks (roles, pod annotation volcano.sh/task-spec) go together and
// which apart:
//   volcano.sh/task-topology-affinity       "ps,worker;ps,chief"  groups to co-locate
//   volcano.sh/task-topology-anti-affinity  "ps;worker,chief"     groups to spread
//                                           (a lone role: its pods apart)
//   volcano.sh/task-topology-task-order     "ps,worker,chief"     the roles placed first
// Declared here: reading the annotations, as Volcano's
// readTopologyFromPgAnnotations (the plugin is task_topology.cc).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "volcanic/api/types.h"

namespace volcanic::task_topology {

inline constexpr char kAffinityAnnotation[] = "volcano.sh/task-topology-affinity";
inline constexpr char kAntiAffinityAnnotation[] = "volcano.sh/task-topology-anti-affinity";
inline constexpr char kTaskOrderAnnotation[] = "volcano.sh/task-topology-task-order";

// The annotations split as Volcano splits them: groups by ';', roles by ','
// (empty names kept, and ignored by the checks).
struct TaskTopology {
  std::vector<std::vector<std::string>> affinity, anti_affinity;
  std::vector<std::string> task_order;
  bool operator==(const TaskTopology&) const = default;
};

// nullopt when the job has none of the three annotations; an error (with
// Volcano's message) when a group names a role none of the job's tasks has,
// or names one twice; the plugin then leaves the job alone.
absl::StatusOr<std::optional<TaskTopology>> ReadTopology(const JobInfo& job);

}  // namespace volcanic::task_topology
