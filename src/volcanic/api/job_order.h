// A queue's own job order (volcanic's; docs/queues.md, "A job order per
// queue"), read from the Queue's annotations:
//   scheduling.volcanic.dev/job-order: fifo | priority | fair | sjf | tiers
//   scheduling.volcanic.dev/sjf-max-wait: a Go duration (sjf's age bound)
// A queue without the annotation takes its parent's (spec.parent), up to the
// root; `tiers` (or none anywhere up) is the scheduler configuration's tiers.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "volcanic/api/json_fields.h"
#include "volcanic/api/placement.h"

namespace volcanic {

inline constexpr char kJobOrderKey[] = "scheduling.volcanic.dev/job-order";
inline constexpr char kSjfMaxWaitKey[] = "scheduling.volcanic.dev/sjf-max-wait";

enum class JobOrderPolicy : uint8_t { kTiers, kFifo, kPriority, kFair, kSjf };

struct QueueJobOrder {
  static constexpr int64_t kDefaultSjfMaxWaitMs = 3'600'000;  // an hour
  bool set = false;  // the annotation is there (else: the parent's)
  JobOrderPolicy policy = JobOrderPolicy::kTiers;
  int64_t sjf_max_wait_ms = kDefaultSjfMaxWaitMs;
  bool operator==(const QueueJobOrder&) const = default;
};

// An unknown policy or a malformed duration is an error naming the annotation.
absl::StatusOr<QueueJobOrder> ParseQueueJobOrder(const Labels& annotations, const Fields& f);

}  // namespace volcanic
