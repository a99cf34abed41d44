#include "volcanic/api/namespace_policy.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "volcanic/api/parse_fields.h"
#include "volcanic/api/quantity.h"
#include "volcanic/api/status_macros.h"

namespace volcanic {

bool DisruptionBudget::Covers(const std::string& pod_ns, const Labels& pod_labels) const {
  return pod_ns == ns && selector && selector->Matches(pod_labels);
}

bool DisruptionBudget::Disrupted(const std::string& pod_name) const {
  return std::binary_search(disrupted_pods.begin(), disrupted_pods.end(), pod_name);
}

absl::StatusOr<DisruptionBudget> ParsePodDisruptionBudget(const nlohmann::json& obj) {
  Fields f(obj);
  ASSIGN_OR_RETURN(Meta m, ParseMeta(obj, f, true));
  DisruptionBudget b;
  b.ns = m.ns;
  b.name = m.name;
  ASSIGN_OR_RETURN(const json* spec, f.Find(obj, "spec", ""));
  if (spec) {
    ASSIGN_OR_RETURN(const json* sel, f.Find(*spec, "selector", "spec"));
    if (sel) {
      ASSIGN_OR_RETURN(LabelSelector s, ParseLabelSelector(*sel, f, "spec.selector"));
      // Volcano skips a budget whose selector selects everything.
      if (!s.match_labels.empty() || !s.match_expressions.empty()) b.selector = std::move(s);
    }
  }
  ASSIGN_OR_RETURN(const json* status, f.Find(obj, "status", ""));
  if (status) {
    ASSIGN_OR_RETURN(auto allowed, f.Int(*status, "disruptionsAllowed", "status"));
    if (allowed && (*allowed < 0 || *allowed > std::numeric_limits<int32_t>::max()))
      return f.Error("status.disruptionsAllowed", "must be a non-negative 32-bit integer");
    b.disruptions_allowed = static_cast<int32_t>(allowed.value_or(0));
    ASSIGN_OR_RETURN(const json* disrupted, f.Find(*status, "disruptedPods", "status"));
    if (disrupted) {
      if (!disrupted->is_object()) return f.Error("status.disruptedPods", "must be an object");
      for (const auto& [pod, when] : disrupted->items()) b.disrupted_pods.push_back(pod);
      std::sort(b.disrupted_pods.begin(), b.disrupted_pods.end());
    }
  }
  return b;
}

absl::StatusOr<QuotaList> ParseQuotaList(const nlohmann::json& base, const std::string& key, const std::string& path,
                                         const Fields& f) {
  QuotaList out;
  ASSIGN_OR_RETURN(const json* v, f.Find(base, key, path));
  if (!v) return out;
  std::string where = path.empty() ? key : absl::StrCat(path, ".", key);
  if (!v->is_object()) return f.Error(where, "must be an object");
  for (const auto& [name, q] : v->items()) {
    auto text = QuantityText(q);
    absl::StatusOr<ExactQuantity> exact = text.ok() ? ParseExactQuantity(*text) : text.status();
    if (!exact.ok()) return f.Error(absl::StrCat(where, ".", name), std::string(exact.status().message()));
    out.emplace_back(name, exact->nanos);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<__int128> QuotaValue(const QuotaList& l, const std::string& name) {
  auto it = std::lower_bound(l.begin(), l.end(), name, [](const auto& e, const std::string& n) { return e.first < n; });
  if (it == l.end() || it->first != name) return std::nullopt;
  return it->second;
}

absl::StatusOr<QuotaStatus> ParseResourceQuota(const nlohmann::json& obj) {
  Fields f(obj);
  ASSIGN_OR_RETURN(Meta m, ParseMeta(obj, f, true));
  QuotaStatus q;
  q.ns = m.ns;
  q.name = m.name;
  ASSIGN_OR_RETURN(const json* status, f.Find(obj, "status", ""));
  if (status) {
    ASSIGN_OR_RETURN(q.hard, ParseQuotaList(*status, "hard", "status", f));
    ASSIGN_OR_RETURN(q.used, ParseQuotaList(*status, "used", "status", f));
  }
  return q;
}

}  // namespace volcanic
