// overcommit (reference §4.6): a job with minResources is enqueued only while
// the cluster, inflated by `overcommit-factor` (default 1.2; per resource
// with `overcommit-factor.<resource>`), has room for it beside the jobs
// already enqueued.
#include "absl/strings/str_cat.h"
#include "volcanic/api/errors.h"
#include "volcanic/framework/session.h"
#include "volcanic/framework/tiers.h"
#include "volcanic/plugins/plugins.h"
#include "volcanic/plugins/share.h"

namespace volcanic {
namespace {

constexpr double kDefaultFactor = 1.2;

class OvercommitPlugin : public Plugin {
 public:
  OvercommitPlugin(double factor, std::vector<std::pair<ResourceId, double>> per_resource)
      : factor_(factor), per_resource_(std::move(per_resource)) {}

  void OnSessionOpen(PluginHandle& h) override {
    Session& ssn = h.session();
    const Resource& used = ssn.cache().ReadyUsed();
    const Resource& total = ssn.total_resource();
    for (int i = 0; i < total.Size(); ++i) {
      double factor = factor_;
      for (const auto& [r, f] : per_resource_)
        if (r == i) factor = f;
      double inflated = std::min(static_cast<double>(total.Get(i)) * factor, static_cast<double>(Resource::kInfinite));
      idle_.Set(i, static_cast<int64_t>(inflated) - used.Get(i));
    }
    // Inqueue jobs reserve their minResources, Running ones what they do not
    // hold of it yet: summed per queue by the cache (queue_sums.h).
    for (const auto& [queue, sums] : ssn.cache().queue_sums()) inqueue_ += sums.overcommit_inqueue;
    h.AddJobEnqueueableFn([this, &ssn](const JobInfo& job) {
      if (!job.min_resources) return kPermit;
      ResourceId short_of = ShortOnRequested(inqueue_ + *job.min_resources, idle_, *job.min_resources);
      if (short_of < 0) return kPermit;
      // The room: the cluster's allocatable inflated by the factor, less what is used.
      ssn.Explain(job, QuotaShortfall("overcommit: the cluster's room", short_of, *job.min_resources, inqueue_, idle_));
      return kReject;
    });
    h.AddJobEnqueuedFn([this](const JobInfo& job) {
      if (job.min_resources) inqueue_ += job.DeductGated(*job.min_resources);
    });
  }

 private:
  double factor_;
  std::vector<std::pair<ResourceId, double>> per_resource_;
  Resource idle_, inqueue_;
};

}  // namespace

PluginOr NewOvercommitPlugin(const Arguments& args) {
  const std::string prefix = "overcommit-factor.";
  if (auto s = args.CheckKnown({"overcommit-factor"}, {prefix}); !s.ok()) return s;
  // Volcano falls back to the default for factors below 1.
  auto valid = [](double f) { return f < 1.0 ? kDefaultFactor : f; };
  auto factor = args.Float("overcommit-factor", kDefaultFactor);
  if (!factor.ok()) return factor.status();
  std::vector<std::pair<ResourceId, double>> per_resource;
  for (const auto& [key, value] : args.raw().items()) {
    if (key.rfind(prefix, 0) != 0) continue;
    auto f = args.Float(key, kDefaultFactor);
    if (!f.ok()) return f.status();
    per_resource.emplace_back(ResourceNames::Intern(key.substr(prefix.size())), valid(*f));
  }
  return std::make_unique<OvercommitPlugin>(valid(*factor), std::move(per_resource));
}

}  // namespace volcanic
