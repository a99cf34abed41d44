#include "volcanic/api/placement.h"

#include <algorithm>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace volcanic {
namespace {

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Kubernetes' labels.Requirement.Matches for the node-affinity operators.
bool RequirementMatches(const NodeSelectorRequirement& r, const std::string* value) {
  if (r.op == "In") return value && Contains(r.values, *value);
  if (r.op == "NotIn") return !value || !Contains(r.values, *value);
  if (r.op == "Exists") return value != nullptr;
  if (r.op == "DoesNotExist") return value == nullptr;
  if (r.op == "Gt" || r.op == "Lt") {
    int64_t have = 0, want = 0;
    if (!value || r.values.size() != 1 || !absl::SimpleAtoi(*value, &have) ||
        !absl::SimpleAtoi(r.values[0], &want))
      return false;
    return r.op == "Gt" ? have > want : have < want;
  }
  return false;
}

// Length-prefixed, so no value can fake a separator.
void Put(std::string* out, const std::string& s) { absl::StrAppend(out, s.size(), ":", s); }

void PutRequirements(std::string* out, const std::vector<NodeSelectorRequirement>& reqs) {
  absl::StrAppend(out, "[", reqs.size());
  for (const auto& r : reqs) {
    Put(out, r.key);
    Put(out, r.op);
    absl::StrAppend(out, "(", r.values.size());
    for (const auto& v : r.values) Put(out, v);
  }
}

void PutLabels(std::string* out, const Labels& labels) {
  absl::StrAppend(out, "{", labels.size());
  for (const auto& [k, v] : labels) {
    Put(out, k);
    Put(out, v);
  }
}

void PutSelector(std::string* out, const std::optional<LabelSelector>& sel) {
  if (!sel) {
    out->append("-");
    return;
  }
  PutLabels(out, sel->match_labels);
  PutRequirements(out, sel->match_expressions);
}

void PutPodTerms(std::string* out, const std::vector<PodAffinityTerm>& terms) {
  absl::StrAppend(out, "<", terms.size());
  for (const auto& t : terms) {
    PutSelector(out, t.selector);
    PutSelector(out, t.namespace_selector);
    absl::StrAppend(out, "(", t.namespaces.size());
    for (const auto& ns : t.namespaces) Put(out, ns);
    Put(out, t.topology_key);
  }
}

void PutSpread(std::string* out, const std::vector<SpreadConstraint>& constraints) {
  absl::StrAppend(out, "~", constraints.size());
  for (const auto& c : constraints) {
    absl::StrAppend(out, c.max_skew, c.soft ? "s" : "h", c.honor_node_affinity ? "a" : "-",
                    c.honor_node_taints ? "t" : "-", c.min_domains, ":");
    Put(out, c.topology_key);
    PutSelector(out, c.selector);
  }
}

}  // namespace

std::string SelectorKey(const std::optional<LabelSelector>& sel) {
  std::string out;
  PutSelector(&out, sel);
  return out;
}

std::string Placement::Key() const {
  std::string out;
  PutLabels(&out, node_selector);
  absl::StrAppend(&out, "|", required_terms.size());
  for (const auto& t : required_terms) {
    PutRequirements(&out, t.match_expressions);
    PutRequirements(&out, t.match_fields);
  }
  absl::StrAppend(&out, "|", preferred_terms.size());
  for (const auto& p : preferred_terms) {
    absl::StrAppend(&out, p.weight);
    PutRequirements(&out, p.term.match_expressions);
    PutRequirements(&out, p.term.match_fields);
  }
  absl::StrAppend(&out, "|", tolerations.size());
  for (const auto& t : tolerations) {
    Put(&out, t.key);
    Put(&out, t.op);
    Put(&out, t.value);
    Put(&out, t.effect);
  }
  absl::StrAppend(&out, "|", host_ports.size());
  for (const auto& h : host_ports) {
    Put(&out, h.protocol);
    Put(&out, h.host_ip);
    absl::StrAppend(&out, h.port);
  }
  PutPodTerms(&out, pod_affinity);
  PutPodTerms(&out, pod_anti_affinity);
  PutSpread(&out, spread);
  return out;
}

bool TermMatches(const NodeSelectorTerm& term, const std::string& node_name,
                 const Labels& labels) {
  // An empty term matches nothing (Kubernetes' nodeaffinity semantics).
  if (term.match_expressions.empty() && term.match_fields.empty()) return false;
  for (const auto& r : term.match_expressions) {
    auto it = labels.find(r.key);
    if (!RequirementMatches(r, it == labels.end() ? nullptr : &it->second)) return false;
  }
  for (const auto& r : term.match_fields) {
    const std::string* v = r.key == "metadata.name" ? &node_name : nullptr;
    if (!RequirementMatches(r, v)) return false;
  }
  return true;
}

bool LabelSelector::Matches(const Labels& labels) const {
  for (const auto& [k, v] : match_labels) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  for (const auto& r : match_expressions) {
    auto it = labels.find(r.key);
    if (!RequirementMatches(r, it == labels.end() ? nullptr : &it->second)) return false;
  }
  return true;
}

bool PodAffinityTerm::MatchesPod(const std::string& own_ns, const std::string& ns, const Labels& labels,
                                 const Labels& ns_labels) const {
  if (!selector || !selector->Matches(labels)) return false;
  bool listed = Contains(namespaces, ns);
  if (namespace_selector) return listed || namespace_selector->Matches(ns_labels);
  return namespaces.empty() ? ns == own_ns : listed;
}

bool Placement::MatchesNodeSelectorAndAffinity(const std::string& node_name,
                                               const Labels& node_labels) const {
  for (const auto& [k, v] : node_selector) {
    auto it = node_labels.find(k);
    if (it == node_labels.end() || it->second != v) return false;
  }
  if (required_terms.empty()) return true;
  return std::any_of(required_terms.begin(), required_terms.end(),
                     [&](const NodeSelectorTerm& t) { return TermMatches(t, node_name, node_labels); });
}

namespace {
bool EffectIn(const absl::flat_hash_set<std::string>& effects, const std::string& effect) {
  return effects.contains("") || effects.contains(effect);
}
}  // namespace

void TolerationIndex::Add(const Toleration& t) {
  Accepts& a = t.key.empty() ? any_key_ : by_key_[t.key];
  if (t.op == "Exists") {
    a.exists_effects.insert(t.effect);
  } else if (t.op.empty() || t.op == "Equal") {
    a.equal_effects[t.value].insert(t.effect);
  }
}

bool TolerationIndex::Accepts::Tolerates(const Taint& taint) const {
  if (EffectIn(exists_effects, taint.effect)) return true;
  auto it = equal_effects.find(taint.value);
  return it != equal_effects.end() && EffectIn(it->second, taint.effect);
}

bool TolerationIndex::Tolerates(const Taint& taint) const {
  if (any_key_.Tolerates(taint)) return true;
  auto it = by_key_.find(taint.key);
  return it != by_key_.end() && it->second.Tolerates(taint);
}

const Taint* Placement::FirstUntoleratedTaint(const std::vector<Taint>& taints) const {
  for (const auto& taint : taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    if (!toleration_index.Tolerates(taint)) return &taint;
  }
  return nullptr;
}

int Placement::CountIntolerablePreferNoSchedule(const std::vector<Taint>& taints) const {
  int n = 0;
  for (const auto& taint : taints) {
    // Only tolerations with an empty or PreferNoSchedule effect count, as in
    // kube-scheduler's TaintToleration score: for this taint they are the
    // only ones that can tolerate it anyway.
    if (taint.effect == "PreferNoSchedule" && !toleration_index.Tolerates(taint)) ++n;
  }
  return n;
}

int64_t Placement::PreferredAffinityScore(const std::string& node_name,
                                          const Labels& node_labels) const {
  int64_t score = 0;
  for (const auto& p : preferred_terms)
    if (p.weight != 0 && TermMatches(p.term, node_name, node_labels)) score += p.weight;
  return score;
}

}  // namespace volcanic
