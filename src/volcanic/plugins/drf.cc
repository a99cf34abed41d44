// drf, flat mode (reference §4.6): jobs with the lower dominant share of the
// cluster go first. Shares follow allocations within the session.
#include "absl/container/flat_hash_map.h"
#include "volcanic/framework/session.h"
#include "volcanic/plugins/plugins.h"
#include "volcanic/plugins/share.h"

namespace volcanic {
namespace {

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
