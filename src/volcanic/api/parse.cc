#include "volcanic/api/parse.h"

#include <optional>
#include <string_view>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "volcanic/api/json_fields.h"
#include "volcanic/api/parse_fields.h"
#include "volcanic/api/pod_requests.h"
#include "volcanic/api/status_macros.h"
#include "volcanic/api/vgpu.h"
#include "volcanic/api/volumes.h"

namespace volcanic {
namespace {

constexpr char kGroupNameAnnotation[] = "scheduling.k8s.io/group-name";
constexpr char kTaskSpecKey[] = "volcano.sh/task-spec";
constexpr char kTaskPriorityKey[] = "volcano.sh/task-priority";
constexpr char kPreemptableKey[] = "volcano.sh/preemptable";
constexpr char kQueueAllocationGate[] = "scheduling.volcano.sh/queue-allocation-gate";

// The names of a PodGroup's minResources the scheduler counts (Volcano's
// NewResource, pkg/scheduler/api/resource_info.go): cpu, memory, pods,
// ephemeral-storage and scalar resources (a name with a domain, hugepages-,
// attachable-volumes-). The ResourceQuota keys a generated PodGroup also
// carries (count/pods, requests.cpu, limits.memory, ...) are not resources
// of a node: they are skipped.
bool SchedulerReadsMinResource(std::string_view name) {
  if (name == "cpu" || name == "memory" || name == "pods" || name == "ephemeral-storage") return true;
  auto starts = [name](std::string_view prefix) { return name.substr(0, prefix.size()) == prefix; };
  if (starts("count/") || starts("requests.")) return false;
  return name.find('/') != std::string_view::npos || starts("hugepages-") || starts("attachable-volumes-");
}

}  // namespace

absl::StatusOr<Meta> ParseMeta(const json& obj, const Fields& f, bool namespaced) {
  Meta m;
  ASSIGN_OR_RETURN(const json* meta, f.Find(obj, "metadata", ""));
  if (!meta) return f.Error("metadata", "is required");
  ASSIGN_OR_RETURN(auto name, f.String(*meta, "name", "metadata"));
  if (!name || name->empty()) return f.Error("metadata.name", "is required");
  m.name = *name;
  ASSIGN_OR_RETURN(auto ns, f.String(*meta, "namespace", "metadata"));
  if (namespaced) m.ns = ns && !ns->empty() ? *ns : "default";
  ASSIGN_OR_RETURN(auto uid, f.String(*meta, "uid", "metadata"));
  m.uid = uid && !uid->empty() ? *uid : (namespaced ? m.ns + "-" + m.name : m.name);
  ASSIGN_OR_RETURN(auto created, f.String(*meta, "creationTimestamp", "metadata"));
  if (created && !created->empty()) {
    auto ms = ParseTimestampMs(*created);
    if (!ms.ok()) return f.Error("metadata.creationTimestamp", std::string(ms.status().message()));
    m.creation_ms = *ms;
  }
  m.deleting = Fields::Has(*meta, "deletionTimestamp");
  ASSIGN_OR_RETURN(m.labels, f.StringMap(*meta, "labels", "metadata"));
  ASSIGN_OR_RETURN(m.annotations, f.StringMap(*meta, "annotations", "metadata"));
  return m;
}

namespace {

// Annotation first, then label: how Volcano reads task-spec and preemptable.
const std::string* AnnotationOrLabel(const Meta& m, const std::string& key) {
  auto a = m.annotations.find(key);
  if (a != m.annotations.end()) return &a->second;
  auto l = m.labels.find(key);
  return l != m.labels.end() ? &l->second : nullptr;
}

absl::StatusOr<NodeSelectorRequirement> ParseRequirement(const json& r, const Fields& f,
                                                         const std::string& path) {
  NodeSelectorRequirement req;
  ASSIGN_OR_RETURN(auto key, f.String(r, "key", path));
  ASSIGN_OR_RETURN(auto op, f.String(r, "operator", path));
  if (!key) return f.Error(path + ".key", "is required");
  if (!op) return f.Error(path + ".operator", "is required");
  static const char* kOps[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
  if (std::none_of(std::begin(kOps), std::end(kOps), [&](const char* o) { return *op == o; }))
    return f.Error(path + ".operator", absl::StrCat("unknown operator \"", *op, "\""));
  req.key = *key;
  req.op = *op;
  ASSIGN_OR_RETURN(const json* values, f.Array(r, "values", path));
  for (size_t i = 0; i < values->size(); ++i) {
    if (!(*values)[i].is_string()) return f.Error(absl::StrCat(path, ".values[", i, "]"), "must be a string");
    req.values.push_back((*values)[i].get<std::string>());
  }
  return req;
}

}  // namespace

absl::StatusOr<NodeSelectorTerm> ParseTerm(const json& t, const Fields& f, const std::string& path) {
  NodeSelectorTerm term;
  for (const char* field : {"matchExpressions", "matchFields"}) {
    ASSIGN_OR_RETURN(const json* arr, f.Array(t, field, path));
    auto& out = std::string(field) == "matchExpressions" ? term.match_expressions : term.match_fields;
    for (size_t i = 0; i < arr->size(); ++i) {
      ASSIGN_OR_RETURN(auto req, ParseRequirement((*arr)[i], f, absl::StrCat(path, ".", field, "[", i, "]")));
      out.push_back(std::move(req));
    }
  }
  return term;
}

absl::StatusOr<LabelSelector> ParseLabelSelector(const json& sel, const Fields& f, const std::string& path) {
  LabelSelector out;
  ASSIGN_OR_RETURN(out.match_labels, f.StringMap(sel, "matchLabels", path));
  ASSIGN_OR_RETURN(const json* exprs, f.Array(sel, "matchExpressions", path));
  for (size_t i = 0; i < exprs->size(); ++i) {
    std::string p = absl::StrCat(path, ".matchExpressions[", i, "]");
    ASSIGN_OR_RETURN(auto req, ParseRequirement((*exprs)[i], f, p));
    if (req.op == "Gt" || req.op == "Lt") return f.Error(p + ".operator", "must be In, NotIn, Exists or DoesNotExist");
    out.match_expressions.push_back(std::move(req));
  }
  return out;
}

namespace {

// spec.affinity.podAffinity / podAntiAffinity: the required terms.
absl::Status ParsePodAffinity(const json& affinity, const Fields& f, const char* kind,
                              std::vector<PodAffinityTerm>* out) {
  std::string base = absl::StrCat("spec.affinity.", kind);
  ASSIGN_OR_RETURN(const json* pa, f.Find(affinity, kind, "spec.affinity"));
  if (!pa) return absl::OkStatus();
  ASSIGN_OR_RETURN(const json* terms, f.Array(*pa, "requiredDuringSchedulingIgnoredDuringExecution", base));
  for (size_t i = 0; i < terms->size(); ++i) {
    std::string path = absl::StrCat(base, ".requiredDuringSchedulingIgnoredDuringExecution[", i, "]");
    const json& t = (*terms)[i];
    PodAffinityTerm term;
    ASSIGN_OR_RETURN(auto key, f.String(t, "topologyKey", path));
    if (!key || key->empty()) return f.Error(path + ".topologyKey", "is required");
    term.topology_key = *key;
    for (auto [field, target] : {std::pair{"labelSelector", &term.selector},
                                 {"namespaceSelector", &term.namespace_selector}}) {
      ASSIGN_OR_RETURN(const json* sel, f.Find(t, field, path));
      if (sel) {
        ASSIGN_OR_RETURN(*target, ParseLabelSelector(*sel, f, absl::StrCat(path, ".", field)));
      }
    }
    ASSIGN_OR_RETURN(const json* namespaces, f.Array(t, "namespaces", path));
    for (size_t j = 0; j < namespaces->size(); ++j) {
      if (!(*namespaces)[j].is_string()) return f.Error(absl::StrCat(path, ".namespaces[", j, "]"), "must be a string");
      term.namespaces.push_back((*namespaces)[j].get<std::string>());
    }
    out->push_back(std::move(term));
  }
  return absl::OkStatus();
}

// spec.topologySpreadConstraints, checked as the API server validates them.
absl::Status ParseTopologySpread(const json& spec, const Fields& f, const Labels& pod_labels, Placement& p) {
  ASSIGN_OR_RETURN(const json* arr, f.Array(spec, "topologySpreadConstraints", "spec"));
  for (size_t i = 0; i < arr->size(); ++i) {
    std::string path = absl::StrCat("spec.topologySpreadConstraints[", i, "]");
    const json& c = (*arr)[i];
    SpreadConstraint sc;
    ASSIGN_OR_RETURN(auto skew, f.Int(c, "maxSkew", path));
    if (!skew || *skew < 1 || *skew > INT32_MAX) return f.Error(path + ".maxSkew", "must be an integer of at least 1");
    sc.max_skew = static_cast<int32_t>(*skew);
    ASSIGN_OR_RETURN(auto key, f.String(c, "topologyKey", path));
    if (!key || key->empty()) return f.Error(path + ".topologyKey", "is required");
    sc.topology_key = *key;
    ASSIGN_OR_RETURN(auto when, f.String(c, "whenUnsatisfiable", path));
    if (!when || (*when != "DoNotSchedule" && *when != "ScheduleAnyway"))
      return f.Error(path + ".whenUnsatisfiable", "must be DoNotSchedule or ScheduleAnyway");
    sc.soft = *when == "ScheduleAnyway";
    ASSIGN_OR_RETURN(auto min_domains, f.Int(c, "minDomains", path));
    if (min_domains) {
      if (*min_domains < 1 || *min_domains > INT32_MAX)
        return f.Error(path + ".minDomains", "must be an integer of at least 1");
      if (sc.soft) return f.Error(path + ".minDomains", "may only be set with whenUnsatisfiable DoNotSchedule");
      sc.min_domains = static_cast<int32_t>(*min_domains);
    }
    for (auto [field, honor] : {std::pair{"nodeAffinityPolicy", &sc.honor_node_affinity},
                                {"nodeTaintsPolicy", &sc.honor_node_taints}}) {
      ASSIGN_OR_RETURN(auto policy, f.String(c, field, path));
      if (policy && *policy != "Honor" && *policy != "Ignore")
        return f.Error(absl::StrCat(path, ".", field), "must be Honor or Ignore");
      if (policy) *honor = *policy == "Honor";
    }
    ASSIGN_OR_RETURN(const json* sel, f.Find(c, "labelSelector", path));
    if (sel) {
      ASSIGN_OR_RETURN(sc.selector, ParseLabelSelector(*sel, f, path + ".labelSelector"));
    }
    ASSIGN_OR_RETURN(const json* keys, f.Array(c, "matchLabelKeys", path));
    for (size_t j = 0; j < keys->size(); ++j) {
      if (!(*keys)[j].is_string()) return f.Error(absl::StrCat(path, ".matchLabelKeys[", j, "]"), "must be a string");
      auto own = pod_labels.find((*keys)[j].get<std::string>());
      if (sc.selector && own != pod_labels.end())
        sc.selector->match_expressions.push_back({own->first, "In", {own->second}});
    }
    p.spread.push_back(std::move(sc));
  }
  return absl::OkStatus();
}

absl::Status ParseNodeAffinity(const json& spec, const Fields& f, Placement& p) {
  ASSIGN_OR_RETURN(const json* affinity, f.Find(spec, "affinity", "spec"));
  if (!affinity) return absl::OkStatus();
  RETURN_IF_ERROR(ParsePodAffinity(*affinity, f, "podAffinity", &p.pod_affinity));
  RETURN_IF_ERROR(ParsePodAffinity(*affinity, f, "podAntiAffinity", &p.pod_anti_affinity));
  ASSIGN_OR_RETURN(const json* na, f.Find(*affinity, "nodeAffinity", "spec.affinity"));
  if (!na) return absl::OkStatus();
  const std::string base = "spec.affinity.nodeAffinity";
  ASSIGN_OR_RETURN(const json* req, f.Find(*na, "requiredDuringSchedulingIgnoredDuringExecution", base));
  if (req) {
    std::string path = base + ".requiredDuringSchedulingIgnoredDuringExecution";
    ASSIGN_OR_RETURN(const json* terms, f.Array(*req, "nodeSelectorTerms", path));
    for (size_t i = 0; i < terms->size(); ++i) {
      ASSIGN_OR_RETURN(auto term, ParseTerm((*terms)[i], f, absl::StrCat(path, ".nodeSelectorTerms[", i, "]")));
      p.required_terms.push_back(std::move(term));
    }
  }
  ASSIGN_OR_RETURN(const json* pref, f.Array(*na, "preferredDuringSchedulingIgnoredDuringExecution", base));
  for (size_t i = 0; i < pref->size(); ++i) {
    std::string path = absl::StrCat(base, ".preferredDuringSchedulingIgnoredDuringExecution[", i, "]");
    ASSIGN_OR_RETURN(auto weight, f.Int((*pref)[i], "weight", path));
    ASSIGN_OR_RETURN(const json* preference, f.Find((*pref)[i], "preference", path));
    PreferredTerm pt;
    pt.weight = static_cast<int32_t>(weight.value_or(0));
    if (preference) {
      ASSIGN_OR_RETURN(pt.term, ParseTerm(*preference, f, path + ".preference"));
    }
    p.preferred_terms.push_back(std::move(pt));
  }
  return absl::OkStatus();
}

absl::Status ParseTolerations(const json& spec, const Fields& f, Placement& p) {
  ASSIGN_OR_RETURN(const json* arr, f.Array(spec, "tolerations", "spec"));
  for (size_t i = 0; i < arr->size(); ++i) {
    std::string path = absl::StrCat("spec.tolerations[", i, "]");
    Toleration t;
    ASSIGN_OR_RETURN(auto key, f.String((*arr)[i], "key", path));
    ASSIGN_OR_RETURN(auto op, f.String((*arr)[i], "operator", path));
    ASSIGN_OR_RETURN(auto value, f.String((*arr)[i], "value", path));
    ASSIGN_OR_RETURN(auto effect, f.String((*arr)[i], "effect", path));
    t.key = key.value_or("");
    t.op = op.value_or("Equal");
    t.value = value.value_or("");
    t.effect = effect.value_or("");
    p.toleration_index.Add(t);
    p.tolerations.push_back(std::move(t));
  }
  return absl::OkStatus();
}

absl::Status ParseHostPorts(const json& spec, const Fields& f, Placement& p) {
  ASSIGN_OR_RETURN(const json* containers, f.Array(spec, "containers", "spec"));
  for (size_t i = 0; i < containers->size(); ++i) {
    std::string path = absl::StrCat("spec.containers[", i, "]");
    ASSIGN_OR_RETURN(const json* ports, f.Array((*containers)[i], "ports", path));
    for (size_t j = 0; j < ports->size(); ++j) {
      std::string pp = absl::StrCat(path, ".ports[", j, "]");
      ASSIGN_OR_RETURN(auto host_port, f.Int((*ports)[j], "hostPort", pp));
      if (!host_port || *host_port == 0) continue;
      if (*host_port < 0 || *host_port > 65535) return f.Error(pp + ".hostPort", "must be in [1, 65535]");
      ASSIGN_OR_RETURN(auto protocol, f.String((*ports)[j], "protocol", pp));
      ASSIGN_OR_RETURN(auto host_ip, f.String((*ports)[j], "hostIP", pp));
      std::string ip = host_ip.value_or("");
      if (ip == "0.0.0.0") ip.clear();
      p.host_ports.push_back({protocol.value_or("TCP"), ip, static_cast<int32_t>(*host_port)});
    }
  }
  return absl::OkStatus();
}

absl::Status ParseRequests(const json& spec, const Fields& f, TaskInfo& t) {
  ASSIGN_OR_RETURN(PodRequests r, ComputePodRequests(spec, f, "spec"));
  t.resreq = std::move(r.requests.value);
  t.resreq.Set(kPods, 1000);  // one pod, in milli-units
  t.best_effort = t.resreq.IsEmpty();
  t.nonzero_cpu = r.nonzero_cpu;
  t.nonzero_mem = r.nonzero_mem;
  t.guaranteed = r.guaranteed;
  t.container_cpus = std::move(r.container_cpus);
  return absl::OkStatus();
}

TaskStatus StatusFromPhase(const std::string& phase, bool has_node, bool deleting) {
  // Volcano's api/helpers.go getTaskStatus.
  if (phase == "Running") return deleting ? TaskStatus::kReleasing : TaskStatus::kRunning;
  if (phase == "Succeeded") return TaskStatus::kSucceeded;
  if (phase == "Failed") return TaskStatus::kFailed;
  if (phase == "Unknown") return TaskStatus::kUnknown;
  if (deleting) return TaskStatus::kReleasing;
  return has_node ? TaskStatus::kBound : TaskStatus::kPending;
}

// "YYYY-MM-DDTHH:MM:SSZ", the form the API server writes, read without
// absl's general parser (its cost was a tenth of an upsert's parse); a valid
// time in any other form, or out of range, is left to absl.
std::optional<int64_t> CanonicalTimestampMs(std::string_view s) {
  if (s.size() != 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != 'Z')
    return std::nullopt;
  auto digits = [&s](int at, int len) {
    int v = 0;
    for (int i = at; i < at + len; ++i) {
      if (s[i] < '0' || s[i] > '9') return -1;
      v = v * 10 + (s[i] - '0');
    }
    return v;
  };
  int y = digits(0, 4), mo = digits(5, 2), d = digits(8, 2), h = digits(11, 2), mi = digits(14, 2),
      sec = digits(17, 2);
  static constexpr int kMonthDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > kMonthDays[mo - 1] + (mo == 2 && leap) || h < 0 || h > 23 ||
      mi < 0 || mi > 59 || sec < 0 || sec > 59)
    return std::nullopt;
  // Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
  int yy = y - (mo <= 2 ? 1 : 0);
  int era = yy / 400, yoe = yy % 400;
  int doy = (153 * (mo > 2 ? mo - 3 : mo + 9) + 2) / 5 + d - 1;
  int64_t days = int64_t{era} * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
  return ((days * 24 + h) * 60 + mi) * 60000 + int64_t{sec} * 1000;
}

}  // namespace

absl::StatusOr<int32_t> ToInt32(const Fields& f, const std::string& path, int64_t v) {
  if (v < INT32_MIN || v > INT32_MAX) return f.Error(path, "out of int32 range");
  return static_cast<int32_t>(v);
}

absl::StatusOr<int64_t> ParseTimestampMs(const std::string& text) {
  if (auto ms = CanonicalTimestampMs(text)) return *ms;
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, text, &t, &err))
    return absl::InvalidArgumentError(absl::StrCat("invalid RFC 3339 time \"", text, "\""));
  return absl::ToUnixMillis(t);
}

std::string FormatTimestamp(int64_t ms) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixMillis(ms), absl::UTCTimeZone());
}

// The lastTransitionTime of the pod's PodScheduled=True condition (cdp's
// cooldown clock), -1 without one.
static absl::StatusOr<int64_t> PodScheduledMs(const json& status, const Fields& f) {
  ASSIGN_OR_RETURN(const json* conds, f.Array(status, "conditions", "status"));
  for (size_t i = 0; i < conds->size(); ++i) {
    const json& c = (*conds)[i];
    if (!c.is_object() || c.value("type", "") != "PodScheduled" || c.value("status", "") != "True") continue;
    ASSIGN_OR_RETURN(auto at, f.String(c, "lastTransitionTime", absl::StrCat("status.conditions[", i, "]")));
    if (!at || at->empty()) return -1;
    auto ms = ParseTimestampMs(*at);
    if (!ms.ok()) return f.Error(absl::StrCat("status.conditions[", i, "].lastTransitionTime"), std::string(ms.status().message()));
    return *ms;
  }
  return -1;
}

absl::StatusOr<TaskInfo> ParsePod(const json& obj, const ParseOptions& opts) {
  Fields f(obj);
  ASSIGN_OR_RETURN(Meta m, ParseMeta(obj, f, true));
  TaskInfo t;
  t.uid = m.uid;
  t.ns = m.ns;
  t.name = m.name;
  t.key = m.ns + "/" + m.name;
  t.creation_ms = m.creation_ms;
  t.terminating = m.deleting;

  ASSIGN_OR_RETURN(const json* spec, f.Find(obj, "spec", ""));
  static const json kEmpty = json::object();
  if (!spec) spec = &kEmpty;
  auto placement = std::make_shared<Placement>();
  RETURN_IF_ERROR(ParseRequests(*spec, f, t));
  ASSIGN_OR_RETURN(t.gpu_requests, ParseGpuRequests(*spec, f));
  RETURN_IF_ERROR(ParseHostPorts(*spec, f, *placement));
  ASSIGN_OR_RETURN(placement->node_selector, f.StringMap(*spec, "nodeSelector", "spec"));
  RETURN_IF_ERROR(ParseNodeAffinity(*spec, f, *placement));
  RETURN_IF_ERROR(ParseTolerations(*spec, f, *placement));
  RETURN_IF_ERROR(ParseTopologySpread(*spec, f, m.labels, *placement));
  ASSIGN_OR_RETURN(t.claims, ParsePodClaims(*spec, f, m.name));

  ASSIGN_OR_RETURN(const json* gates, f.Array(*spec, "schedulingGates", "spec"));
  t.gated = !gates->empty();
  t.queue_gate_only = gates->size() == 1 && (*gates)[0].is_object() &&
                      (*gates)[0].value("name", json()) == kQueueAllocationGate;
  if (auto it = m.annotations.find(kQueueAllocationGate); it != m.annotations.end())
    t.queue_gate_opt_in = it->second == "true";
  ASSIGN_OR_RETURN(auto scheduler, f.String(*spec, "schedulerName", "spec"));
  ASSIGN_OR_RETURN(auto node_name, f.String(*spec, "nodeName", "spec"));
  ASSIGN_OR_RETURN(auto priority, f.Int(*spec, "priority", "spec"));
  ASSIGN_OR_RETURN(auto pc_name, f.String(*spec, "priorityClassName", "spec"));
  ASSIGN_OR_RETURN(auto policy, f.String(*spec, "preemptionPolicy", "spec"));
  if (priority) {
    ASSIGN_OR_RETURN(t.priority, ToInt32(f, "spec.priority", *priority));
    t.spec_priority = t.priority;
  }
  auto tp = m.annotations.find(kTaskPriorityKey);
  if (tp != m.annotations.end()) {
    int32_t v;
    if (!absl::SimpleAtoi(tp->second, &v))
      return f.Error(absl::StrCat("metadata.annotations.", kTaskPriorityKey), "must be an integer");
    t.priority = v;
  }
  t.priority_class_name = pc_name.value_or("");
  t.preemption_policy = policy.value_or("PreemptLowerPriority");
  if (const std::string* v = AnnotationOrLabel(m, kPreemptableKey)) t.preemptable = *v != "false";
  if (const std::string* v = AnnotationOrLabel(m, kTaskSpecKey)) t.role = *v;
  // Volcano's helpers.CompareTask index: the last "-" segment of a name with
  // at least three ("job-worker-3" -> 3).
  int64_t idx;
  if (std::vector<absl::string_view> parts = absl::StrSplit(m.name, '-');
      parts.size() >= 3 && absl::SimpleAtoi(parts.back(), &idx))
    t.index = idx;

  ASSIGN_OR_RETURN(const json* status, f.Find(obj, "status", ""));
  std::string phase = "Pending";
  if (status) {
    ASSIGN_OR_RETURN(auto p, f.String(*status, "phase", "status"));
    if (p && !p->empty()) phase = *p;
    ASSIGN_OR_RETURN(auto started, f.String(*status, "startTime", "status"));
    if (started && !started->empty()) {
      auto ms = ParseTimestampMs(*started);
      if (!ms.ok()) return f.Error("status.startTime", std::string(ms.status().message()));
      t.start_ms = *ms;
    }
    ASSIGN_OR_RETURN(t.scheduled_ms, PodScheduledMs(*status, f));
  }
  t.node_name = node_name.value_or("");
  t.status = StatusFromPhase(phase, !t.node_name.empty(), m.deleting);
  t.observed_status = t.status;
  t.observed_node = t.node_name;

  if (scheduler.value_or("default-scheduler") == opts.scheduler_name) {
    auto group = m.annotations.find(kGroupNameAnnotation);
    // A bare pod is its own group, named as Volcano's PodGroup controller names it.
    t.implicit_group = group == m.annotations.end() || group->second.empty();
    t.job_key = t.ns + "/" + (t.implicit_group ? "podgroup-" + t.uid : group->second);
  }
  t.labels = std::move(m.labels);
  t.annotations = std::move(m.annotations);
  t.gpu_grants = GrantsOf(t.annotations);
  if (!t.gpu_requests.empty()) t.gpu_annotations = GpuAnnotations(t.annotations);
  // Requests by resource id, then the placement constraints.
  for (int i = 0; i < t.resreq.Size(); ++i) absl::StrAppend(&t.class_key, t.resreq.Get(i), ",");
  absl::StrAppend(&t.class_key, "|", t.nonzero_cpu, "|", t.nonzero_mem, "|", placement->Key());
  if (!t.gpu_requests.empty()) absl::StrAppend(&t.class_key, "|", GpuClassKey(t.gpu_requests, t.gpu_annotations));
  // Pods with claims answer per pod (their volumes), never per class.
  if (!t.claims.empty()) absl::StrAppend(&t.class_key, "|pod:", t.key);
  t.placement = std::move(placement);
  t.resource_names = f.TakeResourceNames();
  return t;
}

absl::StatusOr<NodeInfo> ParseNode(const json& obj) {
  Fields f(obj);
  ASSIGN_OR_RETURN(Meta m, ParseMeta(obj, f, false));
  NodeInfo n;
  n.name = m.name;
  n.has_object = true;
  n.labels = std::move(m.labels);
  n.annotations = std::move(m.annotations);
  ASSIGN_OR_RETURN(const json* spec, f.Find(obj, "spec", ""));
  if (spec) {
    ASSIGN_OR_RETURN(auto unsched, f.Bool(*spec, "unschedulable", "spec"));
    n.unschedulable = unsched.value_or(false);
    ASSIGN_OR_RETURN(const json* taints, f.Array(*spec, "taints", "spec"));
    for (size_t i = 0; i < taints->size(); ++i) {
      std::string path = absl::StrCat("spec.taints[", i, "]");
      ASSIGN_OR_RETURN(auto key, f.String((*taints)[i], "key", path));
      ASSIGN_OR_RETURN(auto value, f.String((*taints)[i], "value", path));
      ASSIGN_OR_RETURN(auto effect, f.String((*taints)[i], "effect", path));
      if (!key) return f.Error(path + ".key", "is required");
      if (!effect) return f.Error(path + ".effect", "is required");
      n.taints.push_back({*key, value.value_or(""), *effect});
    }
  }
  ASSIGN_OR_RETURN(const json* status, f.Find(obj, "status", ""));
  Resource alloc;
  if (status) {
    ASSIGN_OR_RETURN(const json* allocatable, f.Find(*status, "allocatable", "status"));
    ASSIGN_OR_RETURN(n.capacity, f.Resources(*status, "capacity", "status"));
    if (allocatable) {
      ASSIGN_OR_RETURN(alloc, f.Resources(*status, "allocatable", "status"));
    } else {
      alloc = n.capacity;
    }
    ASSIGN_OR_RETURN(const json* conds, f.Array(*status, "conditions", "status"));
    for (size_t i = 0; i < conds->size(); ++i) {
      std::string path = absl::StrCat("status.conditions[", i, "]");
      ASSIGN_OR_RETURN(auto type, f.String((*conds)[i], "type", path));
      ASSIGN_OR_RETURN(auto st, f.String((*conds)[i], "status", path));
      if (type == "Ready") n.ready_condition = st == "True";
    }
  }
  n.max_pods = alloc.Get(kPods) / 1000;
  n.gpus = ParseNodeGpus(n.annotations, alloc);
  n.SetAllocatable(std::move(alloc));
  n.resource_names = f.TakeResourceNames();
  return n;
}

absl::StatusOr<JobInfo> ParsePodGroup(const json& obj, const ParseOptions& opts) {
  Fields f(obj);
  ASSIGN_OR_RETURN(Meta m, ParseMeta(obj, f, true));
  JobInfo j;
  j.name = m.name;
  j.ns = m.ns;
  j.uid = m.uid;
  j.key = m.ns + "/" + m.name;
  j.creation_ms = m.creation_ms;
  if (const std::string* v = AnnotationOrLabel(m, kPreemptableKey)) {
    j.preemptable = *v == "true";
    j.gang_evictable = j.preemptable;
  }
  j.labels = std::move(m.labels);
  j.annotations = std::move(m.annotations);
  ASSIGN_OR_RETURN(const json* spec, f.Find(obj, "spec", ""));
  if (spec) {
    ASSIGN_OR_RETURN(auto min_member, f.Int(*spec, "minMember", "spec"));
    if (min_member && *min_member < 0) return f.Error("spec.minMember", "must be >= 0");
    ASSIGN_OR_RETURN(j.min_available, ToInt32(f, "spec.minMember", min_member.value_or(0)));
    ASSIGN_OR_RETURN(const json* mtm, f.Find(*spec, "minTaskMember", "spec"));
    if (mtm) {
      if (!mtm->is_object()) return f.Error("spec.minTaskMember", "must be an object");
      for (const auto& [role, v] : mtm->items()) {
        std::string path = "spec.minTaskMember." + role;
        if (!v.is_number_integer()) return f.Error(path, "must be an integer");
        if (v.get<int64_t>() < 0) return f.Error(path, "must be >= 0");
        ASSIGN_OR_RETURN(j.min_task_member[role], ToInt32(f, path, v.get<int64_t>()));
      }
    }
    ASSIGN_OR_RETURN(auto queue, f.String(*spec, "queue", "spec"));
    j.queue = queue && !queue->empty() ? *queue : opts.default_queue;
    ASSIGN_OR_RETURN(auto pc, f.String(*spec, "priorityClassName", "spec"));
    j.priority_class_name = pc.value_or("");
    if (Fields::Has(*spec, "minResources")) {
      ASSIGN_OR_RETURN(j.min_resources,
                       f.Resources(*spec, "minResources", "spec", {}, nullptr, &SchedulerReadsMinResource));
      ASSIGN_OR_RETURN(j.quota_request, ParseQuotaList(*spec, "minResources", "spec", f));
    }
    ASSIGN_OR_RETURN(j.network_topology, ParseNetworkTopology(*spec, f, "spec"));
    ASSIGN_OR_RETURN(j.sub_group_policies, ParseSubGroupPolicies(*spec, f));
  } else {
    j.queue = opts.default_queue;
  }
  ASSIGN_OR_RETURN(const json* status, f.Find(obj, "status", ""));
  if (status) {
    ASSIGN_OR_RETURN(auto phase, f.String(*status, "phase", "status"));
    j.phase = phase.value_or("");
    ASSIGN_OR_RETURN(const json* conds, f.Array(*status, "conditions", "status"));
    for (size_t i = 0; i < conds->size(); ++i) {
      std::string path = absl::StrCat("status.conditions[", i, "]");
      PodGroupCondition c;
      for (auto [field, out] : {std::pair{"type", &c.type}, {"status", &c.status},
                                {"transitionID", &c.transition_id},
                                {"lastTransitionTime", &c.last_transition_time},
                                {"reason", &c.reason}, {"message", &c.message}}) {
        ASSIGN_OR_RETURN(auto v, f.String((*conds)[i], field, path));
        *out = v.value_or("");
      }
      j.conditions.push_back(std::move(c));
    }
    j.status_phase = j.phase;
    j.status_conditions = j.conditions;
    int i = 0;
    for (const char* field : {"running", "succeeded", "failed"}) {
      ASSIGN_OR_RETURN(auto n, f.Int(*status, field, "status"));
      ASSIGN_OR_RETURN(j.status_counts[i++], ToInt32(f, absl::StrCat("status.", field), n.value_or(0)));
    }
  }
  j.resource_names = f.TakeResourceNames();
  return j;
}

}  // namespace volcanic
