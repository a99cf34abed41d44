// kube-scheduler's PodTopologySpread (podtopologyspread/), which Volcano's
// nodeorder runs as a score (`podtopologyspread.weight`) and its predicates
// as a filter (`predicate.PodTopologySpreadEnable`).
//
// Score, for ScheduleAnyway constraints (scoring.go): a pod prefers the
// nodes whose topology domains hold fewer of the pods it spreads from. For
// the candidate nodes of one task (one batch):
//   ignored   candidates missing the key of any of its soft constraints: 0;
//   raw(n)  = round(Σ_c count_c(n) · ln(domains_c + 2) + maxSkew_c − 1), where
//             domains_c is the number of distinct values of key c among the
//             other candidates (for kubernetes.io/hostname, their number);
//   score(n) = 100 · (max + min − raw(n)) / max over the others (100 if max is 0).
// Filter, for DoNotSchedule constraints (filtering.go): a node missing the
// key of any of them fails (unresolvable); otherwise, for each, the pods in
// the node's domain, plus 1 if the pod matches its own selector, less the
// fewest in any domain (0 when there are fewer domains than minDomains),
// must not exceed maxSkew (resolvable: evicting pods may help).
// count_c(n) counts the pods of the pod's namespace that match the
// constraint's selector and are neither terminating nor being evicted, on the
// session's nodes in n's domain that carry every key (of the constraints of
// the same kind) and pass the constraint's node inclusion policies
// (nodeAffinityPolicy, nodeTaintsPolicy); for hostname, on n itself.
//
// Cost: the counts are kept for the session per (namespace, selector, key,
// inclusion policy) and caught up from the node change log, recounting only
// a changed node (O(its pods)); a batch costs O(candidates × constraints),
// which the normalisation over the batch needs anyway; a filter check is
// O(constraints), the fewest per domain recomputed once after each change.
// Neither is node-local, so such a pod is searched over all nodes.
// Left out: the default constraints kube derives from Services and
// ReplicaSets for pods without their own (Volcano's SystemDefaulting).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "volcanic/api/types.h"

namespace volcanic {

class Session;

class TopologySpread {
 public:
  explicit TopologySpread(Session& ssn);
  ~TopologySpread();

  // Whether the task has a ScheduleAnyway constraint (the score applies).
  static bool Applies(const TaskInfo& t);
  // Adds weight × the normalised score of nodes[i] to (*scores)[i].
  void Add(const TaskInfo& t, absl::Span<NodeInfo* const> nodes, int64_t weight, std::vector<double>* scores);

  // Whether the task has a DoNotSchedule constraint (the filter applies).
  static bool Filters(const TaskInfo& t);
  // nullptr when the node passes the task's DoNotSchedule constraints; else
  // kube's reason, with *unresolvable true when evicting pods cannot help.
  const char* Check(const TaskInfo& t, const NodeInfo& n, bool* unresolvable);

 private:
  struct Counter;
  // The counter of the task's index-th constraint (nodes without the key of
  // every constraint of the same kind, soft or hard, are left out).
  Counter& CounterFor(const TaskInfo& t, int index);

  Session& ssn_;
  absl::flat_hash_map<std::string, std::unique_ptr<Counter>> counters_;
  absl::flat_hash_map<std::pair<int32_t, int>, Counter*> by_class_;  // (class, constraint) -> counter
  // Scratch for one batch, kept to avoid allocating per task.
  std::vector<char> ignored_;
  std::vector<double> raw_;
};

}  // namespace volcanic
