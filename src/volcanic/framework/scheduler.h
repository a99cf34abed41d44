// A long-lived scheduler: an incremental Cache, a configuration and the
// registry of plugins and actions its configuration names (its own: adding a
// plugin to one scheduler's registry changes no other); each RunOnce opens a
// session on the cache, runs the actions and closes it.
// This is what volcanic.Scheduler and volcanic.schedule wrap.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "volcanic/cache/cache.h"
#include "volcanic/framework/conf.h"
#include "volcanic/framework/decisions.h"
#include "volcanic/framework/node_search.h"
#include "volcanic/framework/registry.h"

namespace volcanic {

class Scheduler {
 public:
  // `conf` must have been parsed against `registry` (ParseSchedulerConf).
  // `features`: the Volcano feature gates its sessions follow (conf.h).
  explicit Scheduler(SchedulerConf conf, Registry registry = Registry::Builtins(), ParseOptions opts = {},
                     FeatureGates features = {})
      : cache_(std::move(opts)), conf_(std::move(conf)), registry_(std::move(registry)), features_(features) {}

  Cache& cache() { return cache_; }
  const SchedulerConf& conf() const { return conf_; }
  const Registry& registry() const { return registry_; }
  // One session at `now_ms` (milliseconds since the epoch). A plugin error
  // (a plugin that fails to build, or fails while the session runs: a
  // PluginError) leaves the cache as it was.
  // changed_only: see SessionOptions. The caller then writes the PodGroup and
  // Queue statuses reported, and they are taken as written: their echo is
  // no change (Cache::Upsert), so it needs no session.
  // timings, metrics: see SessionOptions.
  absl::StatusOr<Decisions> RunOnce(int64_t now_ms, bool changed_only = false, bool timings = true,
                                    bool metrics = false);
  // A status write that failed: the next session decides it again. kind is
  // "PodGroup" (key "ns/name") or "Queue" (key "name"); unknown keys are
  // ignored (the object is gone).
  void ForgetStatus(const std::string& kind, const std::string& key);

 private:
  void AssumeStatus(const Decisions& d);

  Cache cache_;
  SchedulerConf conf_;
  Registry registry_;
  FeatureGates features_;
  std::unique_ptr<NodeSearch::Memory> node_memory_ = std::make_unique<NodeSearch::Memory>();
  uint64_t sessions_ = 0;
};

}  // namespace volcanic
