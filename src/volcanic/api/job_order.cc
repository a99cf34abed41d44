#include "volcanic/api/job_order.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "volcanic/api/duration.h"

namespace volcanic {

absl::StatusOr<QueueJobOrder> ParseQueueJobOrder(const Labels& annotations, const Fields& f) {
  static constexpr std::pair<const char*, JobOrderPolicy> kPolicies[] = {
      {"tiers", JobOrderPolicy::kTiers}, {"fifo", JobOrderPolicy::kFifo}, {"priority", JobOrderPolicy::kPriority},
      {"fair", JobOrderPolicy::kFair},   {"sjf", JobOrderPolicy::kSjf}};
  QueueJobOrder order;
  if (auto it = annotations.find(kJobOrderKey); it != annotations.end()) {
    order.set = true;
    bool known = false;
    for (const auto& [name, policy] : kPolicies) {
      if (it->second == name) order.policy = policy, known = true;
    }
    if (!known) {
      return f.Error(absl::StrCat("metadata.annotations[", kJobOrderKey, "]"),
                     absl::StrCat("'", it->second, "' is not a job order (fifo, priority, fair, sjf, tiers)"));
    }
  }
  if (auto it = annotations.find(kSjfMaxWaitKey); it != annotations.end()) {
    absl::StatusOr<int64_t> ns = ParseGoDuration(it->second);
    if (!ns.ok() || *ns < 1'000'000) {
      return f.Error(absl::StrCat("metadata.annotations[", kSjfMaxWaitKey, "]"),
                     absl::StrCat("'", it->second, "' is not a duration of a millisecond or more (e.g. 30m)"));
    }
    order.sjf_max_wait_ms = *ns / 1'000'000;
  }
  return order;
}

}  // namespace volcanic
