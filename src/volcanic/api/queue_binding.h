// QueueBinding (scheduling.volcanic.dev/v1alpha1, volcanic's own kind; see
// docs/queues.md): binds a queue to namespaces, with optional limits per
// namespace in that queue. What the scheduler reads of one.
//
// Bad input: as parse.h (an InvalidArgument status naming the object and the
// field). Admission refuses the same shapes first.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "volcanic/api/placement.h"

namespace volcanic {

struct QueueBinding {
  std::string name, queue;
  std::vector<std::string> namespaces;            // spec.namespaces, sorted
  std::optional<LabelSelector> namespace_selector;  // spec.namespaceSelector
  std::optional<int64_t> max_running_pods;        // spec.limits.maxRunningPods
  std::optional<int64_t> max_pending_jobs;        // spec.limits.maxPendingJobs
  bool operator==(const QueueBinding&) const = default;
  // Whether the binding binds namespace `ns`, whose Namespace has `ns_labels`.
  bool Binds(const std::string& ns, const Labels& ns_labels) const;
  bool HasLimits() const { return max_running_pods || max_pending_jobs; }
};

absl::StatusOr<QueueBinding> ParseQueueBinding(const nlohmann::json& obj);

}  // namespace volcanic
