// fgd: Fragmentation Gradient Descent (Weng et al., "Beware of Fragmentation:
// Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent",
// USENIX ATC'23; the authors' simulator, hkust-adsl/kubernetes-scheduler-
// simulator, pkg/utils/frag.go and pkg/simulator/plugin/fgd_score.go). Not a
// Volcano plugin: volcanic's own, over deviceshare's vGPU cards.
//
// A node's fragmentation for a task shape is the GPU capacity that shape
// cannot use there: all its free GPU when the shape asks for no GPU or
// cannot fit (CPU, GPU model, or too few cards with its share free), else
// the free shares of the cards too small for it. The node's expected
// fragmentation weighs the shapes by their popularity in the workload. A
// task scores a node by how little placing it there grows that expectation:
// 100 * sigmoid(decrease / 100) in card percent (the authors' milli-GPU over
// 1000), without their rounding to an integer. A task asking for part of one
// card takes the card that grows it least (the session asks this plugin).
//
// The workload: argument fgd.shapes, a list of {cpu, gpus, cores, models,
// weight} (cores: percent of each card; models: GPU models the shape may use,
// none for any); without it, the shapes of the tasks the session sees. Either
// way the most popular shapes covering 95% of the weight are kept and
// renormalised, as the authors do.
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "volcanic/api/errors.h"
#include "volcanic/api/quantity.h"
#include "volcanic/framework/session.h"
#include "volcanic/plugins/plugins.h"

namespace volcanic {
namespace {

constexpr double kCoverage = 0.95;

struct Shape {
  int64_t cpu = 0;      // milli
  int32_t gpus = 0;     // cards
  int32_t cores = 0;    // percent of each card
  std::vector<std::string> models;
  double weight = 0;
  auto Key() const { return std::tie(cpu, gpus, cores, models); }
};

// What fragmentation reads of a node: CPU left, each card's free percent, its model.
struct GpuNodeState {
  int64_t cpu_left = 0;
  std::vector<int32_t> free;
  std::string model;
};

std::string ModelOf(const NodeInfo& n) {
  const std::string& type = n.gpus.cards.front().type;
  return absl::StartsWith(type, "NVIDIA-") ? type.substr(7) : type;
}

GpuNodeState StateOf(const NodeInfo& n) {
  GpuNodeState s{n.idle.Get(kCpu), {}, ModelOf(n)};
  for (const GpuCard& c : n.gpus.cards) s.free.push_back(100 - c.used.cores);
  return s;
}

double Fragmentation(const GpuNodeState& n, const Shape& s) {
  int64_t left = 0, small = 0;
  int32_t hosts = 0;
  for (int32_t f : n.free) {
    left += f;
    if (f >= s.cores) ++hosts; else small += f;
  }
  bool usable = s.gpus > 0 && n.cpu_left >= s.cpu && hosts >= s.gpus &&
                (s.models.empty() || std::find(s.models.begin(), s.models.end(), n.model) != s.models.end());
  return static_cast<double>(usable ? small : left);
}

// The shape of a task: its CPU and its first vGPU ask.
Shape ShapeOf(const TaskInfo& t) {
  Shape s;
  s.cpu = t.resreq.Get(kCpu);
  if (!t.gpu_requests.empty()) {
    s.gpus = t.gpu_requests.front().count;
    s.cores = t.gpu_requests.front().cores;
  }
  return s;
}

// The most popular shapes covering kCoverage of the weight, renormalised.
std::vector<Shape> Typical(std::vector<Shape> shapes) {
  std::stable_sort(shapes.begin(), shapes.end(), [](const Shape& a, const Shape& b) { return a.weight > b.weight; });
  double total = 0, kept = 0;
  for (const Shape& s : shapes) total += s.weight;
  size_t n = 0;
  while (n < shapes.size() && kept < kCoverage * total) kept += shapes[n++].weight;
  shapes.resize(n);
  for (Shape& s : shapes) s.weight /= kept;
  return shapes;
}

class FgdPlugin : public Plugin {
 public:
  FgdPlugin(double weight, std::vector<Shape> shapes) : weight_(weight), given_(!shapes.empty()) {
    if (given_) shapes_ = Typical(std::move(shapes));
  }

  bool AnswersOutliveSession() const override { return given_; }

  void OnSessionOpen(PluginHandle& h) override {
    Session& ssn = h.session();
    if (!given_) shapes_ = SeenShapes(ssn);
    std::optional<GpuPolicy> vgpu = VgpuPolicyIn(ssn.conf());
    policy_ = vgpu.value_or(GpuPolicy::kDefault);
    if (vgpu) h.AddCardChoiceFn([this](const TaskInfo& t, const NodeInfo& n) { return BestCard(t, n); });
    h.AddNodeOrderFn([this](const TaskInfo& t, const NodeInfo& n) { return Score(t, n); });
    h.SetNodeLocal([](const TaskInfo&) { return true; });
  }

 private:
  double Expected(const GpuNodeState& n) const {
    double f = 0;
    for (const Shape& s : shapes_) f += s.weight * Fragmentation(n, s);
    return f;
  }

  // The node after the task takes `grants` of it.
  static GpuNodeState After(GpuNodeState n, const TaskInfo& t, const NodeInfo& node, const GpuGrants& grants) {
    n.cpu_left -= t.resreq.Get(kCpu);
    for (const auto& container : grants)
      for (const GpuGrant& g : container)
        for (size_t i = 0; i < node.gpus.cards.size(); ++i)
          if (absl::StrContains(g.uuid, node.gpus.cards[i].uuid)) n.free[i] -= g.cores;
    return n;
  }

  double Score(const TaskInfo& t, const NodeInfo& n) const {
    if (n.gpus.cards.empty()) return Sigmoid(0);
    GpuNodeState now = StateOf(n);
    auto best = Choose(t, n, now);
    if (!best) return 0;  // deviceshare's predicate refuses the node
    return Sigmoid(Expected(now) - best->second);
  }

  double Sigmoid(double decrease) const { return weight_ * 100 / (1 + std::exp(-decrease / 100)); }

  // Cards for the task on node n (`now` its state): none for a CPU-only task;
  // for part of one card, the card that leaves the least fragmentation (the
  // first such); otherwise deviceshare's. With the fragmentation after, when
  // the task fits.
  std::optional<std::pair<GpuGrants, double>> Choose(const TaskInfo& t, const NodeInfo& n,
                                                     const GpuNodeState& now) const {
    const auto& req = t.gpu_requests;
    if (req.empty()) return std::make_pair(GpuGrants(), Expected(After(now, t, n, {})));
    if (req.size() == 1 && req[0].count == 1 && req[0].cores < 100) {
      std::optional<std::pair<GpuGrants, double>> best;
      for (int i = 0; i < static_cast<int>(n.gpus.cards.size()); ++i) {
        auto fit = FitGpus(req, t.gpu_annotations, n.gpus, policy_, i);
        if (!fit.ok()) continue;
        double after = Expected(After(now, t, n, fit->grants));
        if (!best || after < best->second) best.emplace(std::move(fit->grants), after);
      }
      return best;
    }
    auto fit = FitGpus(req, t.gpu_annotations, n.gpus, policy_);
    if (!fit.ok()) return std::nullopt;
    double after = Expected(After(now, t, n, fit->grants));
    return std::make_pair(std::move(fit->grants), after);
  }

  std::optional<GpuGrants> BestCard(const TaskInfo& t, const NodeInfo& n) const {
    auto best = Choose(t, n, StateOf(n));
    if (!best) return std::nullopt;
    return std::move(best->first);
  }

  static std::vector<Shape> SeenShapes(Session& ssn) {
    std::map<std::tuple<int64_t, int32_t, int32_t, std::vector<std::string>>, double> count;
    for (const auto& [_, job] : ssn.jobs())
      for (const auto& [key, t] : job->tasks) count[ShapeOf(*t).Key()] += 1;
    std::vector<Shape> shapes;
    for (const auto& [key, n] : count) {
      auto [cpu, gpus, cores, models] = key;
      shapes.push_back({cpu, gpus, cores, models, n});
    }
    return Typical(std::move(shapes));
  }

  double weight_;
  bool given_;
  std::vector<Shape> shapes_;
  GpuPolicy policy_ = GpuPolicy::kDefault;
};

absl::StatusOr<Shape> ParseShape(const json& j, const std::string& where) {
  if (!j.is_object()) return ConfigError(where + ": must be an object");
  Shape s;
  for (const auto& [key, v] : j.items()) {
    std::string field = absl::StrCat(where, ".", key);
    if (key == "cpu") {
      auto milli = v.is_number() ? ParseMilliQuantity(v.dump())
                                 : v.is_string() ? ParseMilliQuantity(v.get<std::string>())
                                                 : absl::InvalidArgumentError("not a quantity");
      if (!milli.ok()) return ConfigError(field + ": must be a CPU quantity");
      s.cpu = *milli;
    } else if (key == "gpus" || key == "cores") {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || (key == "cores" && v.get<int64_t>() > 100))
        return ConfigError(field + (key == "cores" ? ": must be an integer in [0, 100]" : ": must be an integer >= 0"));
      (key == "gpus" ? s.gpus : s.cores) = static_cast<int32_t>(v.get<int64_t>());
    } else if (key == "models") {
      if (!v.is_array()) return ConfigError(field + ": must be a list of GPU models");
      for (const json& m : v) {
        if (!m.is_string()) return ConfigError(field + ": must be a list of GPU models");
        s.models.push_back(m.get<std::string>());
      }
      std::sort(s.models.begin(), s.models.end());
    } else if (key == "weight") {
      if (!v.is_number() || v.get<double>() < 0) return ConfigError(field + ": must be a number >= 0");
      s.weight = v.get<double>();
    } else {
      return ConfigError(field + ": unknown (known: cpu, gpus, cores, models, weight)");
    }
  }
  if (s.gpus > 0 && s.cores == 0) s.cores = 100;
  return s;
}

}  // namespace

PluginOr NewFgdPlugin(const Arguments& args) {
  if (auto s = args.CheckKnown({"fgd.weight", "fgd.shapes"}); !s.ok()) return s;
  auto weight = args.Float("fgd.weight", 1);
  if (!weight.ok()) return weight.status();
  std::vector<Shape> shapes;
  if (args.Has("fgd.shapes")) {
    const json& list = args.raw()["fgd.shapes"];
    if (!list.is_array()) return ConfigError("plugin fgd: argument fgd.shapes must be a list");
    for (size_t i = 0; i < list.size(); ++i) {
      auto s = ParseShape(list[i], absl::StrCat("plugin fgd: argument fgd.shapes[", i, "]"));
      if (!s.ok()) return s.status();
      shapes.push_back(std::move(*s));
    }
  }
  return std::make_unique<FgdPlugin>(*weight, std::move(shapes));
}

}  // namespace volcanic
