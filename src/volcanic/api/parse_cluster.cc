// The cluster-scoped kinds the scheduler reads besides nodes: Queue,
// PriorityClass and Namespace (parse.h; the namespaced kinds are in parse.cc).
#include "volcanic/api/parse.h"

#include <optional>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "volcanic/api/job_order.h"
#include "volcanic/api/json_fields.h"
#include "volcanic/api/parse_fields.h"
#include "volcanic/api/status_macros.h"

namespace volcanic {
namespace {

constexpr char kHierarchyKey[] = "volcano.sh/hierarchy";
constexpr char kHierarchyWeightsKey[] = "volcano.sh/hierarchy-weights";

// spec.affinity's node group lists (nullopt when absent).
absl::StatusOr<std::optional<QueueAffinity>> ParseQueueAffinity(const json& spec, const Fields& f) {
  ASSIGN_OR_RETURN(const json* affinity, f.Find(spec, "affinity", "spec"));
  if (!affinity) return std::nullopt;
  QueueAffinity out;
  for (const char* side : {"nodeGroupAffinity", "nodeGroupAntiAffinity"}) {
    const std::string path = absl::StrCat("spec.affinity.", side);
    ASSIGN_OR_RETURN(const json* groups, f.Find(*affinity, side, "spec.affinity"));
    if (!groups) continue;
    bool anti = std::string_view(side) == "nodeGroupAntiAffinity";
    for (auto [field, list] : {std::pair{"requiredDuringSchedulingIgnoredDuringExecution", anti ? &out.anti_required : &out.required},
                               std::pair{"preferredDuringSchedulingIgnoredDuringExecution", anti ? &out.anti_preferred : &out.preferred}}) {
      ASSIGN_OR_RETURN(const json* names, f.Array(*groups, field, path));
      for (size_t i = 0; i < names->size(); ++i) {
        if (!(*names)[i].is_string()) return f.Error(absl::StrCat(path, ".", field, "[", i, "]"), "must be a string");
        list->push_back((*names)[i].get<std::string>());
      }
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<QueueInfo> ParseQueue(const json& obj) {
  Fields f(obj);
  ASSIGN_OR_RETURN(Meta m, ParseMeta(obj, f, false));
  QueueInfo q;
  q.name = m.name;
  q.uid = m.uid;
  q.creation_ms = m.creation_ms;
  if (auto h = m.annotations.find(kHierarchyKey); h != m.annotations.end()) q.hierarchy = h->second;
  if (auto w = m.annotations.find(kHierarchyWeightsKey); w != m.annotations.end()) q.hierarchy_weights = w->second;
  ASSIGN_OR_RETURN(q.job_order, ParseQueueJobOrder(m.annotations, f));
  ASSIGN_OR_RETURN(const json* spec, f.Find(obj, "spec", ""));
  if (spec) {
    ASSIGN_OR_RETURN(auto weight, f.Int(*spec, "weight", "spec"));
    if (weight && (*weight < 1 || *weight > 65535)) return f.Error("spec.weight", "must be in [1, 65535]");
    q.weight = static_cast<int32_t>(weight.value_or(1));
    ASSIGN_OR_RETURN(auto priority, f.Int(*spec, "priority", "spec"));
    ASSIGN_OR_RETURN(q.priority, ToInt32(f, "spec.priority", priority.value_or(0)));
    ASSIGN_OR_RETURN(q.capability, f.Resources(*spec, "capability", "spec", Resource::Infinite()));
    ASSIGN_OR_RETURN(q.deserved, f.Resources(*spec, "deserved", "spec"));
    ASSIGN_OR_RETURN(const json* guarantee, f.Find(*spec, "guarantee", "spec"));
    if (guarantee) {
      ASSIGN_OR_RETURN(q.guarantee, f.Resources(*guarantee, "resource", "spec.guarantee"));
    }
    ASSIGN_OR_RETURN(auto reclaimable, f.Bool(*spec, "reclaimable", "spec"));
    q.reclaimable = reclaimable.value_or(true);
    ASSIGN_OR_RETURN(auto parent, f.String(*spec, "parent", "spec"));
    q.parent = parent.value_or("");
    ASSIGN_OR_RETURN(q.affinity, ParseQueueAffinity(*spec, f));
  }
  ASSIGN_OR_RETURN(const json* status, f.Find(obj, "status", ""));
  if (status) {
    ASSIGN_OR_RETURN(auto state, f.String(*status, "state", "status"));
    // A queue the queue controller has not synced yet has no state; treat it
    // as Open, as the controller will.
    if (state && !state->empty()) q.state = *state;
    ASSIGN_OR_RETURN(const json* allocated, f.Find(*status, "allocated", "status"));
    if (allocated) {
      ASSIGN_OR_RETURN(q.status_allocated, f.Resources(*status, "allocated", "status"));
    }
  }
  q.resource_names = f.TakeResourceNames();
  return q;
}

absl::StatusOr<PriorityClassInfo> ParsePriorityClass(const json& obj) {
  Fields f(obj);
  ASSIGN_OR_RETURN(Meta m, ParseMeta(obj, f, false));
  PriorityClassInfo pc;
  pc.name = m.name;
  ASSIGN_OR_RETURN(auto value, f.Int(obj, "value", ""));
  if (!value) return f.Error("value", "is required");
  ASSIGN_OR_RETURN(pc.value, ToInt32(f, "value", *value));
  ASSIGN_OR_RETURN(auto global_default, f.Bool(obj, "globalDefault", ""));
  pc.global_default = global_default.value_or(false);
  return pc;
}

absl::StatusOr<std::pair<std::string, Labels>> ParseNamespace(const json& obj) {
  Fields f(obj);
  ASSIGN_OR_RETURN(Meta m, ParseMeta(obj, f, false));
  return std::make_pair(m.name, std::move(m.labels));
}

}  // namespace volcanic
