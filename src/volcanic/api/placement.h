// The static placement constraints of a pod: node selector, node affinity,
// tolerations and host ports, and the node-side facts they are checked
// against (labels, taints). Pods with equal constraints and requests share a
// task class (see TaskInfo::class_key), so the scheduler evaluates them once.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace volcanic {

using Labels = std::map<std::string, std::string>;  // ordered: stable keys

struct NodeSelectorRequirement {
  std::string key;
  std::string op;  // In, NotIn, Exists, DoesNotExist, Gt, Lt
  std::vector<std::string> values;
  bool operator==(const NodeSelectorRequirement&) const = default;
};

struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;
  std::vector<NodeSelectorRequirement> match_fields;  // only metadata.name
  bool operator==(const NodeSelectorTerm&) const = default;
};

struct PreferredTerm {
  int32_t weight = 0;
  NodeSelectorTerm term;
};

struct Taint {
  std::string key, value, effect;  // NoSchedule, PreferNoSchedule, NoExecute
  bool operator==(const Taint&) const = default;
};

struct Toleration {
  std::string key, op, value, effect;  // op: Equal (default) or Exists
};

// A pod's tolerations, indexed so that whether one taint is tolerated costs
// O(1) however many tolerations and taints there are. The answer is kube's
// (v1helper.TolerationsTolerateTaint): some toleration whose effect is empty
// or the taint's, whose key is empty or the taint's, and whose operator is
// Exists, or Equal (or empty) with the taint's value. An unknown operator
// tolerates nothing.
class TolerationIndex {
 public:
  void Add(const Toleration& t);
  bool Tolerates(const Taint& taint) const;

 private:
  // What the tolerations of one key accept: effects ("" is any) for Exists,
  // and effects per value for Equal.
  struct Accepts {
    absl::flat_hash_set<std::string> exists_effects;
    absl::flat_hash_map<std::string, absl::flat_hash_set<std::string>> equal_effects;
    bool Tolerates(const Taint& taint) const;
  };
  absl::flat_hash_map<std::string, Accepts> by_key_;
  Accepts any_key_;  // tolerations with an empty key
};

struct HostPort {
  std::string protocol;  // TCP (default), UDP, SCTP
  std::string host_ip;   // "" means every address (0.0.0.0)
  int32_t port = 0;
  bool operator==(const HostPort&) const = default;
};

// A Kubernetes LabelSelector: matchLabels and matchExpressions (In, NotIn,
// Exists, DoesNotExist), ANDed. An empty selector matches everything.
struct LabelSelector {
  Labels match_labels;
  std::vector<NodeSelectorRequirement> match_expressions;
  bool Matches(const Labels& labels) const;
  bool operator==(const LabelSelector&) const = default;
};

// A required pod (anti-)affinity term: pods matching `selector` in the
// term's namespaces, counted per value of `topology_key` on their nodes.
struct PodAffinityTerm {
  std::optional<LabelSelector> selector;  // absent: matches no pod
  std::vector<std::string> namespaces;    // empty and no namespace selector: the pod's own
  std::optional<LabelSelector> namespace_selector;
  std::string topology_key;
  // Whether a pod in `ns` with `labels` matches, for a term of a pod in
  // `own_ns`; `ns_labels` are the labels of namespace `ns`.
  bool MatchesPod(const std::string& own_ns, const std::string& ns, const Labels& labels,
                  const Labels& ns_labels) const;
};

// A topologySpreadConstraint (kube-scheduler's PodTopologySpread), with its
// matchLabelKeys already merged into `selector` as the pod's own values.
struct SpreadConstraint {
  int32_t max_skew = 1;
  std::string topology_key;
  bool soft = false;                      // ScheduleAnyway: scored; DoNotSchedule: a filter
  std::optional<LabelSelector> selector;  // absent or empty: counts no pod
  bool honor_node_affinity = true;        // nodeAffinityPolicy, Honor by default
  bool honor_node_taints = false;         // nodeTaintsPolicy, Ignore by default
  int32_t min_domains = 1;                // minDomains: fewer eligible domains count as a minimum of 0
};

struct Placement {
  Labels node_selector;
  std::vector<NodeSelectorTerm> required_terms;  // ORed
  std::vector<PreferredTerm> preferred_terms;
  std::vector<Toleration> tolerations;
  TolerationIndex toleration_index;  // of `tolerations`, filled with them
  std::vector<HostPort> host_ports;
  std::vector<PodAffinityTerm> pod_affinity, pod_anti_affinity;  // required terms
  std::vector<SpreadConstraint> spread;

  // An unambiguous encoding of every field: equal keys, equal placements.
  std::string Key() const;

  bool MatchesNodeSelectorAndAffinity(const std::string& node_name,
                                      const Labels& node_labels) const;
  // The first NoSchedule/NoExecute taint not tolerated, or nullptr.
  const Taint* FirstUntoleratedTaint(const std::vector<Taint>& taints) const;
  // Number of PreferNoSchedule taints not tolerated (nodeorder's taint score).
  int CountIntolerablePreferNoSchedule(const std::vector<Taint>& taints) const;
  // Sum of the weights of preferred terms the node matches.
  int64_t PreferredAffinityScore(const std::string& node_name,
                                 const Labels& node_labels) const;
};

// An unambiguous encoding of a selector (absent and empty differ).
std::string SelectorKey(const std::optional<LabelSelector>& sel);

bool TermMatches(const NodeSelectorTerm& term, const std::string& node_name,
                 const Labels& labels);

}  // namespace volcanic
