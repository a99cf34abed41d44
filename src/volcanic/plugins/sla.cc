// sla (reference §4.6, Volcano's sla.go): a job may state how long it is
// willing to wait (PodGroup annotation volcano.sh/sla-waiting-time, else
// the plugin argument sla-waiting-time, both Go durations such as "1h2m3s").
// Jobs whose deadline (creation + waiting time) comes first go first, jobs
// without a waiting time last. Once a job has waited that long, the plugin
// votes Permit for JobEnqueueable and JobPipelined, which in an early tier
// forces the job in ahead of later tiers' quota checks; before that it
// abstains.
//
// Cost: one annotation parse per job at session open; each callback O(1).
// Time: the vote changes when a deadline passes, so the plugin asks for a
// session at the earliest deadline still ahead (Session::WakeAt).
// Bad input: a malformed or non-positive sla-waiting-time argument is a
// ConfigError naming the plugin and argument (Volcano logs it and runs
// without a global waiting time). A malformed or non-positive annotation is
// ignored for that job, as in Volcano, so the argument applies to it.
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "volcanic/api/duration.h"
#include "volcanic/api/errors.h"
#include "volcanic/framework/session.h"
#include "volcanic/framework/tiers.h"
#include "volcanic/plugins/plugins.h"

namespace volcanic {
namespace {

constexpr char kArgument[] = "sla-waiting-time";
// Volcano reads the scheduling.volcano.sh-style key first, then the bare key.
constexpr char kAnnotation[] = "volcano.sh/sla-waiting-time";
constexpr char kBareAnnotation[] = "sla-waiting-time";
constexpr int64_t kNanosPerMs = 1'000'000;

// A positive Go duration in nanoseconds, or nullopt.
std::optional<int64_t> PositiveDuration(const std::string& text) {
  auto d = ParseGoDuration(text);
  if (!d.ok() || *d <= 0) return std::nullopt;
  return *d;
}

// The job's own waiting time: the first annotation that parses as a
// positive duration (Volcano's JobInfo.WaitingTime).
std::optional<int64_t> AnnotatedWait(const JobInfo& job) {
  for (const char* key : {kAnnotation, kBareAnnotation}) {
    auto it = job.annotations.find(key);
    if (it == job.annotations.end()) continue;
    if (auto d = PositiveDuration(it->second)) return d;
  }
  return std::nullopt;
}

class SlaPlugin : public Plugin {
 public:
  explicit SlaPlugin(std::optional<int64_t> global_wait) : global_wait_(global_wait) {}

  void OnSessionOpen(PluginHandle& h) override {
    Session& ssn = h.session();
    now_ns_ = static_cast<__int128>(ssn.now_ms()) * kNanosPerMs;
    for (const auto& [key, job] : ssn.jobs()) {
      std::optional<int64_t> wait = AnnotatedWait(*job);
      if (!wait) wait = global_wait_;
      if (!wait) continue;
      __int128 deadline = static_cast<__int128>(job->creation_ms) * kNanosPerMs + *wait;
      deadlines_[job] = deadline;
      // The vote turns to Permit at the deadline: a job it can still help
      // (waiting to be enqueued, or with pods waiting) needs a session then.
      if (deadline > now_ns_ && (job->IsPending() || job->Count(Mask(TaskStatus::kPending)) > 0))
        ssn.WakeAt(static_cast<int64_t>((deadline + kNanosPerMs - 1) / kNanosPerMs));
    }
    h.AddJobOrderFn([this](const JobInfo& l, const JobInfo& r) {
      auto ld = Deadline(l), rd = Deadline(r);
      if (!ld) return rd ? 1 : 0;
      if (!rd) return -1;
      if (*ld == *rd) return 0;
      return *ld < *rd ? -1 : 1;
    });
    auto waited_enough = [this](const JobInfo& job) {
      auto d = Deadline(job);
      return d && now_ns_ >= *d ? kPermit : kAbstain;
    };
    h.AddJobEnqueueableFn(waited_enough);
    h.AddJobPipelinedFn(waited_enough);
  }

 private:
  // Creation + waiting time in nanoseconds since the epoch, or nullopt for
  // a job without a waiting time.
  std::optional<__int128> Deadline(const JobInfo& job) const {
    auto it = deadlines_.find(&job);
    if (it == deadlines_.end()) return std::nullopt;
    return it->second;
  }

  std::optional<int64_t> global_wait_;
  __int128 now_ns_ = 0;
  absl::flat_hash_map<const JobInfo*, __int128> deadlines_;
};

}  // namespace

PluginOr NewSlaPlugin(const Arguments& args) {
  if (auto s = args.CheckKnown({kArgument}); !s.ok()) return s;
  if (!args.Has(kArgument)) return std::make_unique<SlaPlugin>(std::nullopt);
  auto text = args.String(kArgument, "");
  if (!text.ok()) return text.status();
  auto wait = ParseGoDuration(*text);
  if (!wait.ok() || *wait <= 0)
    return ConfigError(absl::StrCat("plugin sla: argument ", kArgument,
                                    " must be a positive Go duration such as \"1h2m3s\", got \"", *text, "\"",
                                    wait.ok() ? "" : absl::StrCat(" (", wait.status().message(), ")")));
  return std::make_unique<SlaPlugin>(*wait);
}

}  // namespace volcanic
