// A long-lived scheduler: an incremental Cache plus a configuration; each
// RunOnce opens a session on the cache, runs the actions and closes it.
// This is what volcanic.Scheduler and volcanic.schedule wrap.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "volcanic/cache/cache.h"
#include "volcanic/framework/conf.h"
#include "volcanic/framework/decisions.h"

namespace volcanic {

class Scheduler {
 public:
  explicit Scheduler(SchedulerConf conf) : conf_(std::move(conf)) {}

  Cache& cache() { return cache_; }
  const SchedulerConf& conf() const { return conf_; }
  // One session at `now_ms` (milliseconds since the epoch). A plugin error
  // (a plugin that fails to build, or fails while the session runs: a
  // PluginError) leaves the cache as it was.
  // changed_only: see SessionOptions.
  absl::StatusOr<Decisions> RunOnce(int64_t now_ms, bool changed_only = false);

 private:
  Cache cache_;
  SchedulerConf conf_;
  uint64_t sessions_ = 0;
};

}  // namespace volcanic
