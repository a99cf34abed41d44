// Namespaced policy objects the scheduler reads, as parsed: PodDisruptionBudgets
// (policy/v1; the pdb plugin) and ResourceQuotas (v1; the resourcequota
// plugin), and the exact ResourceList arithmetic a quota check needs.
//
// Bad input: as parse.h (an InvalidArgument status naming the object and the
// field). Only the fields the plugins read are parsed.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "volcanic/api/json_fields.h"
#include "volcanic/api/placement.h"

namespace volcanic {

// What Volcano's pdb plugin reads of a PodDisruptionBudget: its selector and
// the budget the disruption controller computed.
struct DisruptionBudget {
  std::string ns, name;
  std::optional<LabelSelector> selector;  // absent (or empty): matches no pod, as in Volcano
  int32_t disruptions_allowed = 0;        // status.disruptionsAllowed
  std::vector<std::string> disrupted_pods;  // status.disruptedPods names, sorted
  bool operator==(const DisruptionBudget&) const = default;
  // Whether the budget covers the pod (same namespace, labels matched by a
  // non-empty selector).
  bool Covers(const std::string& pod_ns, const Labels& pod_labels) const;
  bool Disrupted(const std::string& pod_name) const;
};

absl::StatusOr<DisruptionBudget> ParsePodDisruptionBudget(const nlohmann::json& obj);

// A Kubernetes ResourceList with every name kept as written (quota names such
// as requests.cpu or count/pods included), values exact in nano-units,
// sorted by name.
using QuotaList = std::vector<std::pair<std::string, __int128>>;

// base[key] as a QuotaList (absent: empty).
absl::StatusOr<QuotaList> ParseQuotaList(const nlohmann::json& base, const std::string& key, const std::string& path,
                                         const Fields& f);
// The value of `name`, nullopt when absent.
std::optional<__int128> QuotaValue(const QuotaList& l, const std::string& name);

// What Volcano's scheduler cache keeps of a ResourceQuota: its status.
struct QuotaStatus {
  std::string ns, name;
  QuotaList hard, used;  // status.hard, status.used
  bool operator==(const QuotaStatus&) const = default;
};

absl::StatusOr<QuotaStatus> ParseResourceQuota(const nlohmann::json& obj);

}  // namespace volcanic
