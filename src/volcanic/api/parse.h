// Building scheduler objects from Kubernetes JSON (what `kubectl get -o json`
// prints). One function per kind; each validates every field it reads.
//
// Bad input: a missing required field, a wrong JSON type or an invalid
// quantity is an InvalidArgument status naming the object and the field, e.g.
//   Pod default/p1: spec.containers[0].resources.requests.cpu: invalid quantity "x"
// Nothing is returned half-built. Unknown fields are ignored, as the API does.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "volcanic/api/types.h"

namespace volcanic {

using nlohmann::json;

// The facts every parser needs from the scheduler's configuration.
struct ParseOptions {
  std::string scheduler_name = "volcano";
  std::string default_queue = "default";
  // A pod of the scheduler without a group annotation is its own group of
  // one at once (volcanic.schedule's convenience). Off, as in Volcano, it
  // waits for the PodGroup the PodGroup controller makes for it.
  bool bare_pods_as_groups = false;
};

absl::StatusOr<TaskInfo> ParsePod(const json& obj, const ParseOptions& opts);
// What ParsePod reads of a pod's status: these fields, and of its conditions
// only the one of this type (cdp's cooldown clock). A caller converting
// objects may leave the rest of the status out (most of a running pod's values).
inline constexpr const char* kPodStatusRead[] = {"phase", "startTime"};
inline constexpr char kPodConditionRead[] = "PodScheduled";
absl::StatusOr<NodeInfo> ParseNode(const json& obj);
absl::StatusOr<JobInfo> ParsePodGroup(const json& obj, const ParseOptions& opts);
absl::StatusOr<QueueInfo> ParseQueue(const json& obj);
absl::StatusOr<PriorityClassInfo> ParsePriorityClass(const json& obj);
// A Namespace: its name and labels.
absl::StatusOr<std::pair<std::string, Labels>> ParseNamespace(const json& obj);

// RFC 3339 text to milliseconds since the epoch.
absl::StatusOr<int64_t> ParseTimestampMs(const std::string& text);
std::string FormatTimestamp(int64_t ms);  // RFC 3339, second precision, UTC

}  // namespace volcanic
