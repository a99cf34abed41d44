// Quota helpers shared by drf, proportion and capacity (Share and
// DominantShare are in api/resource.h).
#pragma once

#include <string>

#include "volcanic/api/resource.h"

namespace volcanic {

// The first dimension `req` asks for (> 0, `pods` aside) on which `used`
// exceeds `limit`; -1 when none does.
inline ResourceId ShortOnRequested(const Resource& used, const Resource& limit, const Resource& req) {
  for (int i = 0; i < req.Size(); ++i)
    if (i != kPods && req.Get(i) > 0 && used.Get(i) > limit.Get(i)) return i;
  return -1;
}

// Every dimension `req` asks for fits: Volcano's LessEqualWithDimension,
// used for quota checks.
inline bool FitsOnRequested(const Resource& used, const Resource& limit, const Resource& req) {
  return ShortOnRequested(used, limit, req) < 0;
}

// Why a job's minResources does not fit a bound on dimension `r`, for the
// job's pending reasons: "<what>: cpu 8 asked, 6 of 10 taken".
std::string QuotaShortfall(const std::string& what, ResourceId r, const Resource& asked, const Resource& taken,
                           const Resource& limit);

}  // namespace volcanic
