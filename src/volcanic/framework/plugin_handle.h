// What a plugin registers its callbacks through in OnSessionOpen: a handle
// bound to the plugin's own slot in the session, so a callback cannot land
// under another plugin's name (or under none).
//
// Promises: each Add* sets this plugin's callback for that extension point
// (a second Add of the same point replaces the first); the session uses it
// in this plugin's tier, subject to the plugin's enable flags. Every
// callback is counted, and timed on a sample: its first kAlwaysTimed calls,
// then one call in kSampleEvery. A steady_clock read pair costs tens of
// nanoseconds on a VM, as much as a cheap callback (an order, a score), so
// timing every call slowed the medium benchmark's allocate by half; the
// sample costs a counter and a branch per call. Decisions::plugin_timings
// reports the exact counts and the sampled time scaled to all calls. What
// each callback must promise is in extension_points.h.
#pragma once

#include <array>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "volcanic/framework/conf.h"
#include "volcanic/framework/decisions.h"
#include "volcanic/framework/extension_points.h"
#include "volcanic/framework/plugin.h"

namespace volcanic {

// The calls of one plugin's callback for one extension point, and the time
// the timed ones took.
struct HookSample {
  static constexpr uint64_t kAlwaysTimed = 32, kSampleEvery = 32;
  uint64_t calls = 0, timed = 0;
  int64_t timed_nanos = 0;
  // Counts a call; whether to time it.
  bool Count() {
    ++calls;
    return calls <= kAlwaysTimed || calls % kSampleEvery == 0;
  }
  // All calls, with the time of the timed ones scaled to all.
  HookTime Estimate() const {
    if (timed == 0) return {0, calls};
    return {static_cast<int64_t>(static_cast<double>(timed_nanos) * static_cast<double>(calls) /
                                 static_cast<double>(timed)),
            calls};
  }
};

// Adds the time from its construction to its destruction to a sample's
// timed calls.
class HookTimer {
 public:
  explicit HookTimer(HookSample* sample) : sample_(sample), start_(std::chrono::steady_clock::now()) {}
  ~HookTimer() {
    sample_->timed_nanos +=
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_).count();
    ++sample_->timed;
  }
  HookTimer(const HookTimer&) = delete;
  HookTimer& operator=(const HookTimer&) = delete;

 private:
  HookSample* sample_;
  std::chrono::steady_clock::time_point start_;
};

// One configured plugin in one session: its callbacks and their timings.
struct PluginSlot {
  std::string name;
  const PluginOption* option = nullptr;
  int tier = 0;
  std::unique_ptr<Plugin> plugin;
#define VOLCANIC_SLOT_FIELD(Name, field, Fn, flag, combination, python) Fn field;
  VOLCANIC_EXTENSION_POINTS(VOLCANIC_SLOT_FIELD)
#undef VOLCANIC_SLOT_FIELD
  // Whether the plugin's predicate and scores are node-local for a task;
  // unset: never.
  NodeLocalFn node_local;
  std::array<HookSample, kHookKinds> times{};
};

class PluginHandle {
 public:
  // timed: whether callbacks are timed (SessionOptions::timings); untimed,
  // they are registered as given, without a wrapper to call through.
  PluginHandle(Session& ssn, PluginSlot& slot, bool timed) : ssn_(ssn), slot_(slot), timed_(timed) {}
  PluginHandle(const PluginHandle&) = delete;
  PluginHandle& operator=(const PluginHandle&) = delete;

  Session& session() const { return ssn_; }
  const std::string& name() const { return slot_.name; }

  // Add<Name>Fn for each extension point (extension_points.h).
#define VOLCANIC_ADD_FN(Name, field, Type, flag, combination, python) \
  void Add##Name##Fn(Type fn) { slot_.field = Timed(HookKind::k##Name, std::move(fn)); }
  VOLCANIC_EXTENSION_POINTS(VOLCANIC_ADD_FN)
#undef VOLCANIC_ADD_FN
  void AddEventHandler(TaskEventFn on_allocate, TaskEventFn on_deallocate) {
    AddOnAllocateFn(std::move(on_allocate));
    AddOnDeallocateFn(std::move(on_deallocate));
  }
  // Whether the answers of this plugin's predicate and scores for a task are
  // node-local (NodeLocalFn); never unless set.
  void SetNodeLocal(NodeLocalFn local) { slot_.node_local = std::move(local); }

 private:
  template <typename R, typename... A>
  std::function<R(A...)> Timed(HookKind kind, std::function<R(A...)> fn) {
    if (!fn || !timed_) return fn;
    HookSample* sample = &slot_.times[static_cast<size_t>(kind)];
    return [sample, fn = std::move(fn)](A... args) -> R {
      if (!sample->Count()) return fn(std::forward<A>(args)...);
      HookTimer timer(sample);
      return fn(std::forward<A>(args)...);
    };
  }

  Session& ssn_;
  PluginSlot& slot_;
  bool timed_;
};

}  // namespace volcanic
