// deviceshare (reference §4.6; Volcano's plugins/deviceshare and
// api/devices/nvidia/vgpu): pods asking for shares of NVIDIA vGPU cards fit a
// node only if each container gets enough distinct cards with room for its
// memory and cores (api/vgpu.h); the cards chosen are accounted per node and
// written on the binding. Only the vGPU device kind is implemented: the GPU
// share, GPU number and Ascend kinds are refused as arguments.
#include <string_view>

#include "absl/strings/str_cat.h"
#include "volcanic/api/errors.h"
#include "volcanic/framework/session.h"
#include "volcanic/plugins/plugins.h"

namespace volcanic {
namespace {

constexpr char kFitFailure[] = "hami-vgpuDeviceSharing error";  // Volcano's reason

class DeviceSharePlugin : public Plugin {
 public:
  DeviceSharePlugin(GpuPolicy policy, double weight) : policy_(policy), weight_(weight) {}

  void OnSessionOpen(PluginHandle& h) override {
    Session& ssn = h.session();
    // Volcano's AllocateFunc: the device ledger takes the task's cards, the
    // ones a plugin chose (fgd) or the first in the policy's card order.
    h.AddReserveFn([this, &ssn](TaskInfo& t, const NodeInfo& n) {
      if (t.gpu_requests.empty() || n.gpus.cards.empty() || !t.gpu_grants.empty()) return;
      if (auto chosen = ssn.CardChoice(t, n)) {
        t.gpu_grants = std::move(*chosen);
        return;
      }
      auto fit = FitGpus(t.gpu_requests, t.gpu_annotations, n.gpus, policy_);
      if (fit.ok()) t.gpu_grants = std::move(fit->grants);
    });
    h.SetNodeLocal([](const TaskInfo&) { return true; });  // the class key holds the vGPU ask
    h.AddPredicateFn([this](const TaskInfo& t, const NodeInfo& n, std::vector<std::string>* reasons) {
      if (t.gpu_requests.empty() || n.gpus.cards.empty()) return Verdict::kFit;
      if (GpusFit(t.gpu_requests, t.gpu_annotations, n.gpus, policy_)) return Verdict::kFit;
      reasons->push_back(kFitFailure);
      return Verdict::kUnschedulable;
    });
    if (weight_ == 0) return;
    h.AddNodeOrderFn([this](const TaskInfo& t, const NodeInfo& n) {
      if (t.gpu_requests.empty() || n.gpus.cards.empty()) return 0.0;
      auto fit = FitGpus(t.gpu_requests, t.gpu_annotations, n.gpus, policy_);
      return fit.ok() ? fit->score * weight_ : 0.0;
    });
  }

 private:
  GpuPolicy policy_;
  double weight_;
};

// Plugins configured but doing nothing: deviceshare with every device kind off.
class InertPlugin : public Plugin {
 public:
  void OnSessionOpen(PluginHandle&) override {}
};

}  // namespace

namespace {

// deviceshare.SchedulePolicy: binpack, spread, or the default order.
GpuPolicy PolicyNamed(const std::string& name) {
  return name == "binpack" ? GpuPolicy::kBinpack : name == "spread" ? GpuPolicy::kSpread : GpuPolicy::kDefault;
}

}  // namespace

std::optional<GpuPolicy> VgpuPolicyIn(const SchedulerConf& conf) {
  for (const Tier& tier : conf.tiers)
    for (const PluginOption& p : tier.plugins) {
      if (p.name != "deviceshare") continue;
      auto vgpu = p.arguments.Bool("deviceshare.VGPUEnable", false);
      auto policy = p.arguments.String("deviceshare.SchedulePolicy", "");
      if (!vgpu.ok() || !*vgpu || !policy.ok()) return std::nullopt;  // off, or refused when built
      return PolicyNamed(*policy);
    }
  return std::nullopt;
}

PluginOr NewDeviceSharePlugin(const Arguments& args) {
  const std::string p = "deviceshare.";
  static constexpr std::string_view kKnown[] = {
      "deviceshare.VGPUEnable", "deviceshare.SchedulePolicy", "deviceshare.ScheduleWeight",
      "deviceshare.GPUSharingEnable", "deviceshare.GPUNumberEnable", "deviceshare.NodeLockEnable",
      "deviceshare.AscendMindClusterVNPUEnable", "deviceshare.AscendHAMiVNPUEnable",
      "deviceshare.KnownGeometriesCMName", "deviceshare.KnownGeometriesCMNamespace"};
  if (auto s = args.CheckKnown(kKnown); !s.ok()) return s;
  for (const char* kind : {"GPUSharingEnable", "GPUNumberEnable", "AscendMindClusterVNPUEnable", "AscendHAMiVNPUEnable"}) {
    auto on = args.Bool(p + kind, false);
    if (!on.ok()) return on.status();
    if (*on)
      return ConfigError(absl::StrCat("plugin deviceshare: argument ", p, kind,
                                      " is not supported by volcanic (only deviceshare.VGPUEnable is)"));
  }
  auto vgpu = args.Bool(p + "VGPUEnable", false);
  auto policy = args.String(p + "SchedulePolicy", "");
  auto weight = args.Int(p + "ScheduleWeight", 0);
  if (!vgpu.ok()) return vgpu.status();
  if (!policy.ok()) return policy.status();
  if (!weight.ok()) return weight.status();
  if (!*vgpu) return std::make_unique<InertPlugin>();
  return std::make_unique<DeviceSharePlugin>(PolicyNamed(*policy), static_cast<double>(*weight));
}

}  // namespace volcanic
