// Volcano's rules for combining plugins across tiers (reference §4.4),
// written once. A Tiered<F> holds, per tier, the callbacks of the plugins
// that registered F and have it enabled, in configuration order.
#pragma once

#include <algorithm>
#include <functional>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"

namespace volcanic {

template <typename F>
using Tiered = std::vector<std::vector<F>>;
// The same, referring to callbacks owned elsewhere (a session's plugin slots):
// collecting them each session then copies no std::function, and, held inline
// for up to four tiers of four plugins, allocates nothing (a session collects
// nineteen of them).
template <typename F>
using TieredRefs = absl::InlinedVector<absl::InlinedVector<std::reference_wrapper<const F>, 4>, 4>;

// Order points (JobOrder, TaskOrder, QueueOrder...): the first non-zero
// comparison wins; 0 when every plugin abstains.
template <typename Tiers, typename... Args>
int FirstNonZero(const Tiers& tiers, const Args&... args) {
  for (const auto& tier : tiers)
    for (const auto& fn : tier)
      if (int c = fn(args...); c != 0) return c;
  return 0;
}

// AND points (Predicate, Allocatable, JobReady...): false at the first false.
template <typename Tiers, typename... Args>
bool AllTrue(const Tiers& tiers, const Args&... args) {
  for (const auto& tier : tiers)
    for (const auto& fn : tier)
      if (!fn(args...)) return false;
  return true;
}

// OR points (Overused): true at the first true.
template <typename Tiers, typename... Args>
bool AnyTrue(const Tiers& tiers, const Args&... args) {
  for (const auto& tier : tiers)
    for (const auto& fn : tier)
      if (fn(args...)) return true;
  return false;
}

inline constexpr int kPermit = 1, kAbstain = 0, kReject = -1;

// Vote points (JobPipelined, JobEnqueueable): any Reject decides false; a
// tier with a Permit decides true at its end; all abstaining means true.
template <typename Tiers, typename... Args>
bool Vote(const Tiers& tiers, const Args&... args) {
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
template <typename Tiers, typename... Args>
bool FirstTierAll(const Tiers& tiers, const Args&... args) {
  for (const auto& tier : tiers) {
    if (tier.empty()) continue;
    return std::all_of(tier.begin(), tier.end(), [&](const auto& fn) { return fn(args...); });
  }
  return false;
}

// Victim points (Preemptable, Reclaimable): a callback returns nullopt to
// abstain, else its victims. The first tier where some callback answers
// decides: the intersection of its answers (by identity, in the first
// answer's order), possibly empty.
//
// Deliberately stricter than Volcano, which lets the next tier decide alone
// when a tier's answers come out empty: there, conformance or gang in tier 1
// vetoing every candidate let drf or proportion in tier 2 evict protected
// pods and break gangs. Here an empty answer is a veto.
template <typename T, typename Tiers, typename... Args>
std::vector<T> Victims(const Tiers& tiers, const Args&... args) {
  for (const auto& tier : tiers) {
    std::optional<std::vector<T>> victims;
    for (const auto& fn : tier) {
      std::optional<std::vector<T>> answer = fn(args...);
      if (!answer) continue;
      if (!victims) {
        victims = std::move(answer);
      } else {
        absl::flat_hash_set<T> allowed(answer->begin(), answer->end());
        std::erase_if(*victims, [&](const T& v) { return !allowed.contains(v); });
      }
      if (victims->empty()) return {};
    }
    if (victims) return std::move(*victims);
  }
  return {};
}

// VictimTasks: the first tier where some callback names a victim decides:
// the union of its answers, each task once, in the order first named; none
// when no tier names one. (Volcano unites into one set across tiers and
// stops at the first tier that leaves it non-empty: the same answer.)
template <typename T, typename Tiers, typename... Args>
std::vector<T> FirstTierUnion(const Tiers& tiers, const Args&... args) {
  for (const auto& tier : tiers) {
    std::vector<T> victims;
    absl::flat_hash_set<T> seen;
    for (const auto& fn : tier)
      for (T v : fn(args...))
        if (seen.insert(v).second) victims.push_back(v);
    if (!victims.empty()) return victims;
  }
  return {};
}

}  // namespace volcanic
