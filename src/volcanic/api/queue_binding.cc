#include "volcanic/api/queue_binding.h"

#include <algorithm>

#include "volcanic/api/parse_fields.h"
#include "volcanic/api/status_macros.h"

namespace volcanic {

bool QueueBinding::Binds(const std::string& ns, const Labels& ns_labels) const {
  if (std::binary_search(namespaces.begin(), namespaces.end(), ns)) return true;
  return namespace_selector && namespace_selector->Matches(ns_labels);
}

absl::StatusOr<QueueBinding> ParseQueueBinding(const nlohmann::json& obj) {
  Fields f(obj);
  ASSIGN_OR_RETURN(Meta m, ParseMeta(obj, f, /*namespaced=*/false));
  QueueBinding b;
  b.name = m.name;
  ASSIGN_OR_RETURN(const json* spec, f.Find(obj, "spec", ""));
  if (!spec) return f.Error("spec", "required");
  ASSIGN_OR_RETURN(auto queue, f.String(*spec, "queue", "spec"));
  if (!queue || queue->empty()) return f.Error("spec.queue", "required");
  b.queue = *queue;
  ASSIGN_OR_RETURN(const json* names, f.Array(*spec, "namespaces", "spec"));
  for (const json& n : *names) {
    if (!n.is_string()) return f.Error("spec.namespaces", "must be a list of namespace names");
    b.namespaces.push_back(n.get<std::string>());
  }
  std::sort(b.namespaces.begin(), b.namespaces.end());
  ASSIGN_OR_RETURN(const json* selector, f.Find(*spec, "namespaceSelector", "spec"));
  if (selector) {
    ASSIGN_OR_RETURN(b.namespace_selector, ParseLabelSelector(*selector, f, "spec.namespaceSelector"));
  }
  ASSIGN_OR_RETURN(const json* limits, f.Find(*spec, "limits", "spec"));
  if (limits) {
    for (auto [key, field] : {std::pair{"maxRunningPods", &b.max_running_pods},
                              std::pair{"maxPendingJobs", &b.max_pending_jobs}}) {
      ASSIGN_OR_RETURN(*field, f.Int(*limits, key, "spec.limits"));
      if (*field && **field < 0) return f.Error(std::string("spec.limits.") + key, "must be a non-negative integer");
    }
  }
  return b;
}

}  // namespace volcanic
