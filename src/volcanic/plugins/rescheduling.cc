// rescheduling (reference §4.6; Volcano pkg/scheduler/plugins/rescheduling):
// every `interval` it answers the shuffle action's VictimTasks with the pods
// its strategies would move. Volcano v1.15 implements one strategy,
// lowNodeUtilization (low_node_utilization.go, node_utilization_util.go):
//  - a node is *low* when it is schedulable and each of its loads is under
//    `thresholds`, *high* when not low and some load is above
//    `targetThresholds`; nothing moves unless there are low nodes, high
//    nodes, and not every node is low;
//  - the low nodes' room is Σ (target% - load%) of each one's allocatable
//    cpu and memory;
//  - high nodes are taken most loaded first (cpu% + memory%), and on each the
//    pods lowest priority first (no spec.priority before any), then
//    BestEffort, Burstable, Guaranteed; before each pod, moving stops on that
//    node once no load is at or above its target or the room of cpu or memory
//    is exactly 0 (Volcano's test); a pod among the offered candidates is a
//    victim, its requests taken from the room and, as a share of the node's
//    capacity, from the node's load.
// Loads are NodeInfo::usage, read for the window `metricsPeriod` (default
// 5m). Volcano's metrics sources report only the 10m window, so as in
// Volcano, loads read as 0 unless `metricsPeriod: 10m` is configured.
//
// Deterministic where Volcano is not: equally loaded high nodes go by name,
// pods equal in priority and QoS by pod key (Volcano sorts unstably over
// map order); a pod is matched to a candidate by identity, where Volcano
// matches by name alone.
//
// Cost: at most once per interval, O(pods on the Ready nodes · log) plus one
// pass over the candidates.
#include <algorithm>
#include <memory>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "volcanic/api/duration.h"
#include "volcanic/api/errors.h"
#include "volcanic/api/status_macros.h"
#include "volcanic/framework/session.h"
#include "volcanic/plugins/plugins.h"

namespace volcanic {
namespace {

constexpr char kName[] = "rescheduling";
constexpr char kLowNodeUtilization[] = "lowNodeUtilization";
constexpr int64_t kDefaultIntervalNs = int64_t{5} * 60 * 1000 * 1000 * 1000;

// Percentages per dimension; 100 each by default (Volcano's
// NewLowNodeUtilizationConf). `pod` is read as Volcano reads it but, as
// there, no load has that dimension.
struct Thresholds {
  double cpu = 100, memory = 100;
};

struct LowNodeUtilization {
  Thresholds low, target;
};

struct ReschedulingArgs {
  int64_t interval_ns = kDefaultIntervalNs;
  std::string metrics_period = "5m";
  LowNodeUtilization lnu;
};

// A node's loads in percent as the strategy sees and lowers them.
struct Load {
  NodeInfo* node;
  double cpu, memory;
};

int QosRank(const TaskInfo& t) { return t.best_effort ? 0 : t.guaranteed ? 2 : 1; }

// Volcano's sortPods, made a strict order.
bool EvictFirst(const TaskInfo* l, const TaskInfo* r) {
  if (l->spec_priority != r->spec_priority) return l->spec_priority < r->spec_priority;  // nullopt first
  if (QosRank(*l) != QosRank(*r)) return QosRank(*l) < QosRank(*r);
  return l->key < r->key;
}

class ReschedulingPlugin : public Plugin {
 public:
  explicit ReschedulingPlugin(ReschedulingArgs args) : args_(std::move(args)) {}

  void OnSessionOpen(PluginHandle& h) override {
    Session& ssn = h.session();
    if (!TimeToRun(ssn)) return;
    h.AddVictimTasksFn([this, &ssn](const std::vector<TaskInfo*>& candidates) { return Victims(ssn, candidates); });
  }

 private:
  // Volcano's timeToRun: the first interval counts from the scheduler's first
  // session (Volcano: from the process start); a run is due once it is over.
  bool TimeToRun(Session& ssn) const {
    std::optional<int64_t>& last = ssn.cache().last_run_ms(kName);
    const int64_t now = ssn.now_ms();
    const int64_t interval_ms = (args_.interval_ns + 999999) / 1000000;
    if (!last) last = now;
    if (now <= *last + interval_ms) {
      ssn.WakeAt(*last + interval_ms + 1);
      return false;
    }
    last = now;
    ssn.WakeAt(now + interval_ms + 1);
    return true;
  }

  Load LoadOf(NodeInfo* n) const {
    if (args_.metrics_period != kNodeMetricsPeriod) return {n, 0, 0};
    return {n, n->usage.cpu, n->usage.memory};
  }

  std::vector<TaskInfo*> Victims(const Session& ssn, const std::vector<TaskInfo*>& candidates) const {
    const LowNodeUtilization& conf = args_.lnu;
    std::vector<Load> low, high;
    for (NodeInfo* n : ssn.nodes()) {
      Load l = LoadOf(n);
      if (!n->unschedulable && l.cpu < conf.low.cpu && l.memory < conf.low.memory) {
        low.push_back(l);
      } else if (l.cpu > conf.target.cpu || l.memory > conf.target.memory) {
        high.push_back(l);
      }
    }
    if (low.empty() || low.size() == ssn.nodes().size() || high.empty()) return {};
    // The room left on the low nodes up to their targets, in millicores and
    // bytes, truncated per node as Volcano's quantities are.
    int64_t room_cpu = 0, room_memory = 0;
    for (const Load& l : low) {
      const Resource& cap = l.node->allocatable;
      room_cpu += Share(conf.target.cpu, cap.Get(kCpu)) - Share(l.cpu, cap.Get(kCpu));
      room_memory += Share(conf.target.memory, cap.Get(kMemory)) - Share(l.memory, cap.Get(kMemory));
    }
    std::stable_sort(high.begin(), high.end(),
                     [](const Load& a, const Load& b) { return a.cpu + a.memory > b.cpu + b.memory; });
    absl::flat_hash_set<const TaskInfo*> offered(candidates.begin(), candidates.end());
    std::vector<TaskInfo*> victims;
    for (Load& l : high) {
      std::vector<TaskInfo*> pods;
      for (const auto& [key, t] : l.node->tasks) pods.push_back(t);
      std::sort(pods.begin(), pods.end(), EvictFirst);
      for (TaskInfo* t : pods) {
        bool over = l.cpu >= conf.target.cpu || l.memory >= conf.target.memory;
        if (!over || room_cpu == 0 || room_memory == 0) break;
        if (!offered.contains(t)) continue;
        const int64_t cpu = t->resreq.Get(kCpu), memory = t->resreq.Get(kMemory);
        room_cpu -= cpu;
        room_memory -= memory;
        // A share of status.capacity, as Volcano computes it (x/0 is +inf there too).
        l.cpu -= static_cast<double>(cpu) * 100 / static_cast<double>(l.node->capacity.Get(kCpu));
        l.memory -= static_cast<double>(memory) * 100 / static_cast<double>(l.node->capacity.Get(kMemory));
        victims.push_back(t);
      }
    }
    return victims;
  }

  // percent% of `amount`, truncated (Volcano's convertPercentToQuan).
  static int64_t Share(double percent, int64_t amount) {
    return static_cast<int64_t>(percent * static_cast<double>(amount) * 0.01);
  }

  ReschedulingArgs args_;
};

absl::Status ArgumentError(const std::string& what) {
  return ConfigError(absl::StrCat("plugin ", kName, ": argument ", what));
}

// `thresholds` / `targetThresholds`: whole percentages by cpu, memory, pod
// (Volcano reads each value as an int; we refuse anything else).
absl::Status ParseThresholds(const json& raw, const std::string& where, Thresholds& out) {
  if (!raw.is_object()) return ArgumentError(absl::StrCat(where, ": must be a map such as {cpu: 20, memory: 20}"));
  for (const auto& [key, value] : raw.items()) {
    if (key != "cpu" && key != "memory" && key != "pod")
      return ArgumentError(absl::StrCat(where, ": unknown resource \"", key, "\"; known: cpu, memory, pod"));
    if (!value.is_number_integer())
      return ArgumentError(absl::StrCat(where, ".", key, ": must be a whole percentage such as 20"));
    auto v = static_cast<double>(value.get<int64_t>());
    if (key == "cpu") out.cpu = v;
    if (key == "memory") out.memory = v;
  }
  return absl::OkStatus();
}

// One entry of `strategies`: {name, params}. Volcano decodes any name and
// skips those it has no function for; we refuse them.
absl::Status ParseStrategy(const json& s, const std::string& where, LowNodeUtilization& out) {
  if (!s.is_object() || !s.contains("name") || !s["name"].is_string())
    return ArgumentError(absl::StrCat(where, ": must be a map with a name"));
  for (const auto& [key, _] : s.items())
    if (key != "name" && key != "params")
      return ArgumentError(absl::StrCat(where, ": unknown field \"", key, "\"; known: name, params"));
  if (s["name"] != kLowNodeUtilization)
    return ArgumentError(absl::StrCat(where, ".name: unknown strategy \"", s["name"].get<std::string>(),
                                      "\"; Volcano v1.15 implements only ", kLowNodeUtilization));
  const json params = s.value("params", json::object());
  if (params.is_null()) return absl::OkStatus();
  if (!params.is_object()) return ArgumentError(absl::StrCat(where, ".params: must be a map"));
  for (const auto& [key, value] : params.items()) {
    std::string at = absl::StrCat(where, ".params.", key);
    if (key == "thresholds") {
      RETURN_IF_ERROR(ParseThresholds(value, at, out.low));
    } else if (key == "targetThresholds") {
      RETURN_IF_ERROR(ParseThresholds(value, at, out.target));
    } else if (key != "thresholdPriority" && key != "thresholdPriorityClassName" && key != "nodeFit" &&
               key != "numberOfNodes") {
      // Those four are Volcano's fields that its v1.15 code never reads: accepted, no effect.
      return ArgumentError(absl::StrCat(at, ": unknown; known: thresholds, targetThresholds, thresholdPriority, "
                                            "thresholdPriorityClassName, nodeFit, numberOfNodes"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

PluginOr NewReschedulingPlugin(const Arguments& args) {
  if (auto s = args.CheckKnown({"interval", "metricsPeriod", "strategies"}); !s.ok()) return s;
  ReschedulingArgs parsed;
  auto interval = args.String("interval", "5m");
  if (!interval.ok()) return interval.status();
  auto ns = ParseGoDuration(*interval);
  if (!ns.ok() || *ns <= 0) return ArgumentError(absl::StrCat("interval: must be a positive duration such as 5m, got \"", *interval, "\""));
  parsed.interval_ns = *ns;
  auto period = args.String("metricsPeriod", "5m");
  if (!period.ok()) return period.status();
  parsed.metrics_period = period->empty() ? "5m" : *period;
  if (args.Has("strategies")) {
    const json& list = args.raw()["strategies"];
    if (!list.is_array()) return ArgumentError("strategies: must be a list of {name, params}");
    for (size_t i = 0; i < list.size(); ++i)
      RETURN_IF_ERROR(ParseStrategy(list[i], absl::StrCat("strategies[", i, "]"), parsed.lnu));
  }
  return std::make_unique<ReschedulingPlugin>(std::move(parsed));
}

}  // namespace volcanic
