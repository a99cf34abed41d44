// usage (reference §4.6; Volcano pkg/scheduler/plugins/usage/usage.go):
// load-aware placement from the nodes' measured CPU and memory load
// (NodeInfo::usage, which the scheduler's metrics source reports: docs/
// scheduler.md "Node metrics"). A node whose load is above a threshold is
// filtered out (UnschedulableAndUnresolvable, Volcano's reasons); the score
// prefers idle nodes:
//   100 x usage.weight x (cpu.weight x (100 - cpu%) + memory.weight x (100 - mem%)) / 100 / (cpu.weight + memory.weight)
// Metrics older than five minutes on the session clock, or never reported,
// count for nothing: the node passes and scores 0.
//
// Cost: O(1) per predicate or score; O(nodes) at session open for the wake
// time. Not node-local: the answer changes when the metrics go stale, with no
// change to the node.
#include <memory>

#include "absl/strings/str_cat.h"
#include "volcanic/api/errors.h"
#include "volcanic/framework/session.h"
#include "volcanic/plugins/plugins.h"

namespace volcanic {
namespace {

constexpr char kName[] = "usage";
constexpr int64_t kMetricsActiveMs = 5 * 60 * 1000;
constexpr double kMaxNodeScore = 100;
constexpr char kCpuTooHigh[] = "the CPU load of the node exceeds the upper limit.";
constexpr char kMemoryTooHigh[] = "the memory load of the node exceeds the upper limit.";

struct UsageArgs {
  int64_t usage_weight = 5, cpu_weight = 1, memory_weight = 1;
  double cpu_threshold = 80, memory_threshold = 80;
};

class UsagePlugin : public Plugin {
 public:
  explicit UsagePlugin(UsageArgs args) : args_(args) {}

  void OnSessionOpen(PluginHandle& h) override {
    const Session& ssn = h.session();
    now_ms_ = ssn.now_ms();
    // The answers change when fresh metrics go stale: wake the loop then.
    for (const NodeInfo* n : ssn.nodes())
      if (Fresh(*n)) ssn.WakeAt(n->usage.metrics_ms + kMetricsActiveMs + 1);
    h.AddPredicateFn([this](const TaskInfo&, const NodeInfo& n, std::vector<std::string>* reasons) {
      if (!Fresh(n)) return Verdict::kFit;
      if (n.usage.cpu > args_.cpu_threshold) {
        reasons->emplace_back(kCpuTooHigh);
      } else if (n.usage.memory > args_.memory_threshold) {
        reasons->emplace_back(kMemoryTooHigh);
      } else {
        return Verdict::kFit;
      }
      return Verdict::kUnresolvable;
    });
    h.AddNodeOrderFn([this](const TaskInfo&, const NodeInfo& n) { return Score(n); });
  }

 private:
  // Volcano compares the age with `>`: metrics exactly five minutes old count.
  bool Fresh(const NodeInfo& n) const {
    return n.usage.metrics_ms >= 0 && now_ms_ - n.usage.metrics_ms <= kMetricsActiveMs;
  }

  double Score(const NodeInfo& n) const {
    if (!Fresh(n)) return 0;
    double cpu = (100 - n.usage.cpu) / 100 * static_cast<double>(args_.cpu_weight);
    double memory = (100 - n.usage.memory) / 100 * static_cast<double>(args_.memory_weight);
    double score = (cpu + memory) / static_cast<double>(args_.cpu_weight + args_.memory_weight);
    return score * kMaxNodeScore * static_cast<double>(args_.usage_weight);
  }

  UsageArgs args_;
  int64_t now_ms_ = 0;
};

absl::Status ArgumentError(const std::string& what) {
  return ConfigError(absl::StrCat("plugin ", kName, ": argument ", what));
}

// `thresholds: {cpu: 80, mem: 80}`: whole percentages, as Volcano reads them
// (it takes any other value as 0; we refuse it).
absl::Status ParseThresholds(const json& raw, UsageArgs& out) {
  if (!raw.is_object()) return ArgumentError("thresholds: must be a map such as {cpu: 80, mem: 80}");
  for (const auto& [key, value] : raw.items()) {
    double* slot = key == "cpu" ? &out.cpu_threshold : key == "mem" ? &out.memory_threshold : nullptr;
    if (!slot) return ArgumentError(absl::StrCat("thresholds: unknown resource \"", key, "\"; known: cpu, mem"));
    if (!value.is_number_integer())
      return ArgumentError(absl::StrCat("thresholds.", key, ": must be a whole percentage such as 80"));
    *slot = static_cast<double>(value.get<int64_t>());
  }
  return absl::OkStatus();
}

}  // namespace

PluginOr NewUsagePlugin(const Arguments& args) {
  if (auto s = args.CheckKnown({"usage.weight", "cpu.weight", "memory.weight", "thresholds"}); !s.ok()) return s;
  UsageArgs parsed;
  for (auto [key, slot] : {std::pair{"usage.weight", &parsed.usage_weight}, std::pair{"cpu.weight", &parsed.cpu_weight},
                           std::pair{"memory.weight", &parsed.memory_weight}}) {
    auto v = args.Int(key, *slot);
    if (!v.ok()) return v.status();
    if (*v < 0) return ArgumentError(absl::StrCat(key, ": must not be negative"));
    *slot = *v;
  }
  if (parsed.cpu_weight + parsed.memory_weight == 0)
    return ArgumentError("cpu.weight and memory.weight: must not both be 0 (the score divides by their sum)");
  if (args.Has("thresholds")) {
    if (auto s = ParseThresholds(args.raw()["thresholds"], parsed); !s.ok()) return s;
  }
  return std::make_unique<UsagePlugin>(parsed);
}

}  // namespace volcanic
