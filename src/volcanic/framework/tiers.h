// Volcano's rules for combining plugins across tiers (reference §4.4),
// written once. A Tiered<F> holds, per tier, the callbacks of the plugins
// that registered F and have it enabled, in configuration order.
#pragma once

#include <algorithm>
#include <optional>
#include <vector>

namespace volcanic {

template <typename F>
using Tiered = std::vector<std::vector<F>>;

// Order points (JobOrder, TaskOrder, QueueOrder...): the first non-zero
// comparison wins; 0 when every plugin abstains.
template <typename F, typename... Args>
int FirstNonZero(const Tiered<F>& tiers, const Args&... args) {
  for (const auto& tier : tiers)
    for (const auto& fn : tier)
      if (int c = fn(args...); c != 0) return c;
  return 0;
}

// AND points (Predicate, Allocatable, JobReady...): false at the first false.
template <typename F, typename... Args>
bool AllTrue(const Tiered<F>& tiers, const Args&... args) {
  for (const auto& tier : tiers)
    for (const auto& fn : tier)
      if (!fn(args...)) return false;
  return true;
}

// OR points (Overused): true at the first true.
template <typename F, typename... Args>
bool AnyTrue(const Tiered<F>& tiers, const Args&... args) {
  for (const auto& tier : tiers)
    for (const auto& fn : tier)
      if (fn(args...)) return true;
  return false;
}

inline constexpr int kPermit = 1, kAbstain = 0, kReject = -1;

// Vote points (JobPipelined, JobEnqueueable): any Reject decides false; a
// tier with a Permit decides true at its end; all abstaining means true.
template <typename F, typename... Args>
bool Vote(const Tiered<F>& tiers, const Args&... args) {
  for (const auto& tier : tiers) {
    bool permitted = false;
    for (const auto& fn : tier) {
      int v = fn(args...);
      if (v < 0) return false;
      if (v > 0) permitted = true;
    }
    if (permitted) return true;
  }
  return true;
}

// JobStarving: the first tier with any callback decides, as the AND of that
// tier's callbacks; false when no plugin has one.
template <typename F, typename... Args>
bool FirstTierAll(const Tiered<F>& tiers, const Args&... args) {
  for (const auto& tier : tiers) {
    if (tier.empty()) continue;
    return std::all_of(tier.begin(), tier.end(), [&](const auto& fn) { return fn(args...); });
  }
  return false;
}

// Victim points (Preemptable, Reclaimable): a callback returns nullopt to
// abstain, else its victims. Within a tier the first answer seeds the set and
// later ones intersect it (by identity, keeping the first answer's order); an
// empty answer empties the set and ends the tier. The first tier ending with
// a non-empty set decides. As in Volcano, an emptied set stays empty for the
// intersections of later tiers.
template <typename T, typename F, typename... Args>
std::vector<T> Victims(const Tiered<F>& tiers, const Args&... args) {
  std::vector<T> victims;
  bool seeded = false;
  for (const auto& tier : tiers) {
    for (const auto& fn : tier) {
      std::optional<std::vector<T>> answer = fn(args...);
      if (!answer) continue;
      if (answer->empty()) {
        victims.clear();
        break;
      }
      if (!seeded) {
        victims = std::move(*answer);
        seeded = true;
        continue;
      }
      std::vector<T> kept;
      for (const T& v : victims)
        if (std::find(answer->begin(), answer->end(), v) != answer->end()) kept.push_back(v);
      victims = std::move(kept);
    }
    if (!victims.empty()) return victims;
  }
  return victims;
}

}  // namespace volcanic
