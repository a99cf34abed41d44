// kube-scheduler's InterPodAffinity filter for the predicates plugin: the
// pod's required pod affinity and anti-affinity, and the required
// anti-affinity of pods already placed, by topology domain.
//
// Cost: the per-domain counts are built once per task and session change
// (O(pods on nodes)); each node check is then O(terms). Results depend on
// other nodes, so tasks it concerns are searched without the class index.
#pragma once

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
  explicit PodAffinityFilter(Session& ssn) : ssn_(ssn) {}

  // Whether the filter can reject a node for this task at all.
  bool Concerns(const TaskInfo& t) const;
  // The reason the node fails, or nullptr.
  const char* Check(const TaskInfo& t, const NodeInfo& n);

 private:
  using DomainCounts = absl::flat_hash_map<std::string, int>;  // topology value -> matching pods
  void Prepare(const TaskInfo& t);
  bool ExistingTermMatches(const TaskInfo& existing, const PodAffinityTerm& term, const TaskInfo& t) const;

  Session& ssn_;
  const TaskInfo* prepared_for_ = nullptr;
  uint64_t prepared_at_ = 0;
  bool concerned_ = false;
  std::vector<DomainCounts> affinity_, anti_affinity_;  // per term of the task
  bool any_affinity_match_ = false;
  absl::flat_hash_set<std::pair<std::string, std::string>> forbidden_;  // (key, value) by existing pods
};

}  // namespace volcanic
