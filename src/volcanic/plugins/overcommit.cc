// overcommit (reference §4.6): a job with minResources is enqueued only while
// the cluster, inflated by `overcommit-factor` (default 1.2), has room for it
// beside the jobs already enqueued.
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
  explicit OvercommitPlugin(double factor) : factor_(factor) {}

  void OnSessionOpen(Session& ssn) override {
    Resource used;
    for (NodeInfo* n : ssn.nodes()) used += n->used;
    const Resource& total = ssn.total_resource();
    for (int i = 0; i < total.Size(); ++i)
      idle_.Set(i, static_cast<int64_t>(static_cast<double>(total.Get(i)) * factor_) - used.Get(i));
    for (const auto& [key, job] : ssn.jobs()) {
      if (!job->min_resources) continue;
      if (job->phase == "Inqueue") inqueue_ += *job->min_resources;
      if (job->phase == "Running" && job->Count(kAllocatedMask) >= job->min_available)
        inqueue_ += job->min_resources->SubFloorZero(job->allocated);
    }
    ssn.AddJobEnqueueableFn("overcommit", [this](const JobInfo& job) {
      if (!job.min_resources) return kPermit;
      return FitsOnRequested(inqueue_ + *job.min_resources, idle_, *job.min_resources) ? kPermit : kReject;
    });
    ssn.AddJobEnqueuedFn("overcommit", [this](const JobInfo& job) {
      if (job.min_resources) inqueue_ += *job.min_resources;
    });
  }

 private:
  double factor_;
  Resource idle_, inqueue_;
};

}  // namespace

PluginOr NewOvercommitPlugin(const Arguments& args) {
  if (auto s = args.CheckKnown({"overcommit-factor"}); !s.ok()) return s;
  auto factor = args.Float("overcommit-factor", kDefaultFactor);
  if (!factor.ok()) return factor.status();
  // Volcano falls back to the default below 1.
  return std::make_unique<OvercommitPlugin>(*factor < 1.0 ? kDefaultFactor : *factor);
}

}  // namespace volcanic
