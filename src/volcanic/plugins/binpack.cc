// binpack (reference §4.6): prefer nodes that the task fills most, weighted
// per resource; 0 on a node where any requested resource would overflow.
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "volcanic/framework/session.h"
#include "volcanic/plugins/plugins.h"

namespace volcanic {
namespace {

class BinpackPlugin : public Plugin {
 public:
  BinpackPlugin(double weight, std::vector<std::pair<ResourceId, double>> weights)
      : weight_(weight), weights_(std::move(weights)) {}

  void OnSessionOpen(PluginHandle& h) override {
    if (weight_ == 0) return;
    h.AddNodeOrderFn([this](const TaskInfo& t, const NodeInfo& n) { return Score(t, n); });
    h.SetNodeLocal([](const TaskInfo&) { return true; });
  }

 private:
  double Score(const TaskInfo& t, const NodeInfo& n) const {
    double score = 0, weight_sum = 0;
    for (const auto& [r, w] : weights_) {
      int64_t req = t.resreq.Get(r);
      if (req <= 0) continue;
      int64_t alloc = n.allocatable.Get(r), after = n.used.Get(r) + req;
      if (after > alloc) return 0;  // Volcano: an overflow makes the whole score 0
      if (alloc > 0 && w != 0) score += static_cast<double>(after) * w / static_cast<double>(alloc);
      weight_sum += w;
    }
    if (weight_sum > 0) score /= weight_sum;
    return score * 100 * weight_;
  }

  double weight_;
  std::vector<std::pair<ResourceId, double>> weights_;
};

}  // namespace

PluginOr NewBinpackPlugin(const Arguments& args) {
  if (auto s = args.CheckKnown({"binpack.weight", "binpack.cpu", "binpack.memory", "binpack.resources"},
                               {"binpack.resources."});
      !s.ok())
    return s;
  auto weight = args.Float("binpack.weight", 1);
  auto cpu = args.Float("binpack.cpu", 1);
  auto mem = args.Float("binpack.memory", 1);
  auto extra = args.String("binpack.resources", "");
  for (const auto* s : {&weight, &cpu, &mem})
    if (!s->ok()) return s->status();
  if (!extra.ok()) return extra.status();
  auto clamp = [](double w) { return w < 0 ? 1.0 : w; };  // Volcano resets negatives to 1
  std::vector<std::pair<ResourceId, double>> weights = {{kCpu, clamp(*cpu)}, {kMemory, clamp(*mem)}};
  for (absl::string_view name : absl::StrSplit(*extra, ',', absl::SkipWhitespace())) {
    std::string n(absl::StripAsciiWhitespace(name));
    auto w = args.Float("binpack.resources." + n, 1);
    if (!w.ok()) return w.status();
    weights.emplace_back(ResourceNames::Intern(n), clamp(*w));
  }
  return std::make_unique<BinpackPlugin>(*weight, std::move(weights));
}

}  // namespace volcanic
