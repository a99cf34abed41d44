// kube-scheduler's InterPodAffinity filter for the predicates plugin: the
// pod's required pod affinity and anti-affinity, and the required
// anti-affinity of pods already placed, by topology domain
// (kube-scheduler's interpodaffinity/filtering.go).
//
// Cost: the per-domain counts are built once per task and session change
// (O(pods on nodes)); each node check is then O(terms). Results depend on
// other nodes, so tasks it concerns are searched without the class index.
#pragma once

#include <functional>

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "volcanic/api/types.h"

namespace volcanic {

class Session;

class PodAffinityFilter {
 public:
  // `gone`: whether a placed pod was evicted by this session, so that it no
  // longer counts (kube-scheduler's preemption takes victims off the node).
  PodAffinityFilter(Session& ssn, std::function<bool(const TaskInfo&)> gone);

  // Whether the filter can reject a node for this task at all (cached).
  bool Concerns(const TaskInfo& t);
  // The reason the node fails, or nullptr.
  const char* Check(const TaskInfo& t, const NodeInfo& n);
  // Whether evicting pods may resolve a failure: anti-affinity may be, a
  // missing affinity match not (kube-scheduler's status codes).
  static bool Resolvable(const char* reason);

 private:
  using Domain = std::pair<std::string, std::string>;  // topology key, value
  struct AntiTerm {
    std::string owner_ns;
    const PodAffinityTerm* term;
  };
  void Prepare(const TaskInfo& t);

  Session& ssn_;
  std::function<bool(const TaskInfo&)> gone_;
  std::vector<AntiTerm> anti_terms_;  // distinct terms of pods with anti-affinity
  absl::flat_hash_map<const TaskInfo*, bool> concerns_;
  const TaskInfo* prepared_for_ = nullptr;
  uint64_t prepared_at_ = 0;
  bool concerned_ = false;
  absl::flat_hash_map<Domain, int> affinity_;       // pods matching all affinity terms
  std::vector<absl::flat_hash_set<std::string>> anti_affinity_;  // per term: values with a match
  absl::flat_hash_set<Domain> forbidden_;           // by placed pods' anti-affinity
};

}  // namespace volcanic
