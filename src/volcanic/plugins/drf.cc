// drf, flat mode (reference §4.6): jobs with the lower dominant share of the
// cluster go first, and a task may preempt tasks of jobs whose share after
// losing them stays at least the preemptor's share after gaining it. Shares
// follow allocations within the session.
#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "volcanic/framework/session.h"
#include "volcanic/plugins/plugins.h"
#include "volcanic/plugins/share.h"

namespace volcanic {
namespace {

constexpr double kShareDelta = 0.000001;  // Volcano's shareDelta

class DrfPlugin : public Plugin {
 public:
  void OnSessionOpen(Session& ssn) override {
    total_ = ssn.total_resource();
    for (const auto& [key, job] : ssn.jobs()) {
      Attr& a = attrs_[job];
      a.allocated = job->allocated;
      a.share = DominantShare(a.allocated, total_);
    }
    ssn.AddJobOrderFn("drf", [this](const JobInfo& l, const JobInfo& r) {
      double ls = attrs_[&l].share, rs = attrs_[&r].share;
      if (ls == rs) return 0;
      return ls < rs ? -1 : 1;
    });
    ssn.AddPreemptableFn("drf", [this](const TaskInfo& preemptor, const std::vector<TaskInfo*>& candidates) {
      double preemptor_share = DominantShare(attrs_[preemptor.job].allocated + preemptor.resreq, total_);
      absl::flat_hash_map<const JobInfo*, Resource> left;  // victim jobs' allocations as victims go
      std::vector<TaskInfo*> victims;
      for (TaskInfo* t : candidates) {
        auto [it, created] = left.try_emplace(t->job);
        if (created) it->second = attrs_[t->job].allocated;
        it->second = it->second.SubFloorZero(t->resreq);
        double victim_share = DominantShare(it->second, total_);
        if (preemptor_share < victim_share || std::abs(preemptor_share - victim_share) <= kShareDelta)
          victims.push_back(t);
      }
      return std::optional<std::vector<TaskInfo*>>(std::move(victims));
    });
    ssn.AddEventHandler(
        "drf", [this](const TaskInfo& t) { Update(t, +1); }, [this](const TaskInfo& t) { Update(t, -1); });
  }

 private:
  struct Attr {
    Resource allocated;
    double share = 0;
  };
  void Update(const TaskInfo& t, int sign) {
    if (!t.job) return;
    Attr& a = attrs_[t.job];
    if (sign > 0) a.allocated += t.resreq; else a.allocated -= t.resreq;
    a.share = DominantShare(a.allocated, total_);
  }
  Resource total_;
  absl::flat_hash_map<const JobInfo*, Attr> attrs_;
};

}  // namespace

PluginOr NewDrfPlugin(const Arguments& args) {
  if (auto s = args.CheckKnown({}); !s.ok()) return s;
  return std::make_unique<DrfPlugin>();
}

}  // namespace volcanic
