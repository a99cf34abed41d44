#include "volcanic/plugins/pod_affinity.h"

#include "volcanic/framework/session.h"

namespace volcanic {
namespace {

const std::string* Label(const NodeInfo& n, const std::string& key) {
  auto it = n.labels.find(key);
  return it == n.labels.end() ? nullptr : &it->second;
}

bool MatchesAll(const std::vector<PodAffinityTerm>& terms, const TaskInfo& t, const Labels& ns_labels) {
  for (const auto& term : terms)
    if (!term.MatchesPod(t.ns, t.ns, t.labels, ns_labels)) return false;
  return true;
}

}  // namespace

bool PodAffinityFilter::ExistingTermMatches(const TaskInfo& existing, const PodAffinityTerm& term,
                                            const TaskInfo& t) const {
  return term.MatchesPod(existing.ns, t.ns, t.labels, ssn_.cache().NamespaceLabels(t.ns));
}

bool PodAffinityFilter::Concerns(const TaskInfo& t) const {
  const Placement& p = *t.placement;
  if (!p.pod_affinity.empty() || !p.pod_anti_affinity.empty()) return true;
  for (const TaskInfo* e : ssn_.cache().anti_affinity_tasks())
    for (const auto& term : e->placement->pod_anti_affinity)
      if (ExistingTermMatches(*e, term, t)) return true;
  return false;
}

void PodAffinityFilter::Prepare(const TaskInfo& t) {
  if (prepared_for_ == &t && prepared_at_ == ssn_.changes()) return;
  prepared_for_ = &t;
  prepared_at_ = ssn_.changes();
  concerned_ = Concerns(t);
  if (!concerned_) return;
  const Placement& p = *t.placement;
  affinity_.assign(p.pod_affinity.size(), {});
  anti_affinity_.assign(p.pod_anti_affinity.size(), {});
  any_affinity_match_ = false;
  forbidden_.clear();
  auto count = [&](const std::vector<PodAffinityTerm>& terms, std::vector<DomainCounts>& out,
                   const NodeInfo& n, const TaskInfo& other, bool* any) {
    for (size_t i = 0; i < terms.size(); ++i) {
      if (!terms[i].MatchesPod(t.ns, other.ns, other.labels, ssn_.cache().NamespaceLabels(other.ns))) continue;
      if (any) *any = true;
      if (const std::string* v = Label(n, terms[i].topology_key)) ++out[i][*v];
    }
  };
  bool has_terms = !p.pod_affinity.empty() || !p.pod_anti_affinity.empty();
  for (NodeInfo* n : ssn_.nodes()) {
    if (!has_terms) break;
    for (const auto& [key, other] : n->tasks) {
      if (other == &t) continue;
      count(p.pod_affinity, affinity_, *n, *other, &any_affinity_match_);
      count(p.pod_anti_affinity, anti_affinity_, *n, *other, nullptr);
    }
  }
  for (const TaskInfo* e : ssn_.cache().anti_affinity_tasks()) {
    if (e == &t || !e->node || e->node->index < 0) continue;
    for (const auto& term : e->placement->pod_anti_affinity)
      if (ExistingTermMatches(*e, term, t))
        if (const std::string* v = Label(*e->node, term.topology_key)) forbidden_.emplace(term.topology_key, *v);
  }
}

const char* PodAffinityFilter::Check(const TaskInfo& t, const NodeInfo& n) {
  Prepare(t);
  if (!concerned_) return nullptr;
  const Placement& p = *t.placement;
  // The first pod of a group that selects itself may go anywhere.
  bool first_of_group = !any_affinity_match_ && MatchesAll(p.pod_affinity, t, ssn_.cache().NamespaceLabels(t.ns));
  if (!first_of_group) {
    for (size_t i = 0; i < p.pod_affinity.size(); ++i) {
      const std::string* v = Label(n, p.pod_affinity[i].topology_key);
      if (!v || !affinity_[i].contains(*v)) return "node(s) didn't match pod affinity rules";
    }
  }
  for (size_t i = 0; i < p.pod_anti_affinity.size(); ++i) {
    const std::string* v = Label(n, p.pod_anti_affinity[i].topology_key);
    if (v && anti_affinity_[i].contains(*v)) return "node(s) didn't match pod anti-affinity rules";
  }
  for (const auto& [key, value] : forbidden_) {
    const std::string* v = Label(n, key);
    if (v && *v == value) return "node(s) didn't satisfy existing pods anti-affinity rules";
  }
  return nullptr;
}

}  // namespace volcanic
