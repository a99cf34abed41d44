// cdp, cooldown protection (reference §4.6): a Running pod labelled or
// annotated `volcano.sh/cooldown-time` (a Go duration, "600s") is no victim
// of preempt or reclaim until that long after its PodScheduled condition
// turned True, so elastic jobs' pods are not evicted again right after they
// started. A pod with an unparsable value, not Running, or without that
// condition is a victim as usual. Volcano reads the wall clock; volcanic the
// session's clock, and asks for a session when the earliest cooldown ends
// (Session::WakeAt). No arguments.
//
// Cost: O(candidates) per call, parsing each candidate's duration.
#include <memory>

#include "volcanic/api/duration.h"
#include "volcanic/framework/session.h"
#include "volcanic/plugins/plugins.h"

namespace volcanic {
namespace {

constexpr char kCooldownTime[] = "volcano.sh/cooldown-time";

// The pod's cooldown in nanoseconds; nullopt when it has none or an
// unparsable one. The label wins over the annotation, even when bad.
std::optional<int64_t> CooldownNs(const TaskInfo& t) {
  auto it = t.labels.find(kCooldownTime);
  if (it == t.labels.end()) {
    it = t.annotations.find(kCooldownTime);
    if (it == t.annotations.end()) return std::nullopt;
  }
  auto ns = ParseGoDuration(it->second);
  if (!ns.ok()) return std::nullopt;
  return *ns;
}

class CdpPlugin : public Plugin {
 public:
  void OnSessionOpen(PluginHandle& h) override {
    const Session& ssn = h.session();
    auto filter = [&ssn](const TaskInfo&, const std::vector<TaskInfo*>& candidates) {
      std::vector<TaskInfo*> victims;
      for (TaskInfo* t : candidates)
        if (!CoolingDown(ssn, *t)) victims.push_back(t);
      return std::optional<std::vector<TaskInfo*>>(std::move(victims));
    };
    h.AddPreemptableFn(filter);
    h.AddReclaimableFn(filter);
  }

 private:
  // Running (as the object says) and within its cooldown since scheduled.
  static bool CoolingDown(const Session& ssn, const TaskInfo& t) {
    if (t.observed_status != TaskStatus::kRunning || t.scheduled_ms < 0) return false;
    std::optional<int64_t> cooldown = CooldownNs(t);
    if (!cooldown) return false;
    // In nanoseconds, exactly and without overflow, as Go's Time.Add/After.
    __int128 until_ns = static_cast<__int128>(t.scheduled_ms) * 1000000 + *cooldown;
    if (until_ns <= static_cast<__int128>(ssn.now_ms()) * 1000000) return false;
    // The first millisecond at which it is a victim again.
    ssn.WakeAt(static_cast<int64_t>(until_ns / 1000000) + 1);
    return true;
  }
};

}  // namespace

PluginOr NewCdpPlugin(const Arguments& args) {
  if (auto s = args.CheckKnown({}); !s.ok()) return s;
  return std::make_unique<CdpPlugin>();
}

}  // namespace volcanic
