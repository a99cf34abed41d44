#include "volcanic/plugins/pod_affinity.h"

#include <string_view>

#include "absl/container/flat_hash_set.h"
#include "volcanic/framework/session.h"

namespace volcanic {
namespace {

const std::string* Label(const NodeInfo& n, const std::string& key) {
  auto it = n.labels.find(key);
  return it == n.labels.end() ? nullptr : &it->second;
}

}  // namespace

PodAffinityFilter::PodAffinityFilter(Session& ssn, std::function<bool(const TaskInfo&)> gone)
    : ssn_(ssn), gone_(std::move(gone)) {
  // Pods of one class share their terms: keep each (class, namespace) once.
  absl::flat_hash_set<std::pair<int32_t, std::string>> seen;
  for (const TaskInfo* e : ssn_.cache().anti_affinity_tasks())
    if (seen.emplace(e->class_id, e->ns).second)
      for (const auto& term : e->placement->pod_anti_affinity) anti_terms_.push_back({e->ns, &term});
}

bool PodAffinityFilter::Concerns(const TaskInfo& t) {
  auto [it, inserted] = concerns_.try_emplace(&t, false);
  if (!inserted) return it->second;
  const Placement& p = *t.placement;
  bool concerned = !p.pod_affinity.empty() || !p.pod_anti_affinity.empty();
  const Labels& ns_labels = ssn_.cache().NamespaceLabels(t.ns);
  for (size_t i = 0; !concerned && i < anti_terms_.size(); ++i)
    concerned = anti_terms_[i].term->MatchesPod(anti_terms_[i].owner_ns, t.ns, t.labels, ns_labels);
  it->second = concerned;
  return concerned;
}

void PodAffinityFilter::Prepare(const TaskInfo& t) {
  if (prepared_for_ == &t && prepared_at_ == ssn_.changes()) return;
  prepared_for_ = &t;
  prepared_at_ = ssn_.changes();
  concerned_ = Concerns(t);
  if (!concerned_) return;
  const Placement& p = *t.placement;
  affinity_.clear();
  anti_affinity_.assign(p.pod_anti_affinity.size(), {});
  forbidden_.clear();
  auto matches = [&](const PodAffinityTerm& term, const TaskInfo& other) {
    return term.MatchesPod(t.ns, other.ns, other.labels, ssn_.cache().NamespaceLabels(other.ns));
  };
  if (!p.pod_affinity.empty() || !p.pod_anti_affinity.empty()) {
    for (NodeInfo* n : ssn_.nodes()) {
      for (const auto& [key, other] : n->tasks) {
        if (other == &t || gone_(*other)) continue;
        bool all = !p.pod_affinity.empty();
        for (const auto& term : p.pod_affinity) all = all && matches(term, *other);
        if (all)
          for (const auto& term : p.pod_affinity)
            if (const std::string* v = Label(*n, term.topology_key)) ++affinity_[{term.topology_key, *v}];
        for (size_t i = 0; i < p.pod_anti_affinity.size(); ++i)
          if (matches(p.pod_anti_affinity[i], *other))
            if (const std::string* v = Label(*n, p.pod_anti_affinity[i].topology_key)) anti_affinity_[i].insert(*v);
      }
    }
  }
  const Labels& ns_labels = ssn_.cache().NamespaceLabels(t.ns);
  for (const TaskInfo* e : ssn_.cache().anti_affinity_tasks()) {
    if (e == &t || !e->node || e->node->index < 0 || gone_(*e)) continue;
    for (const auto& term : e->placement->pod_anti_affinity)
      if (term.MatchesPod(e->ns, t.ns, t.labels, ns_labels))
        if (const std::string* v = Label(*e->node, term.topology_key)) forbidden_.emplace(term.topology_key, *v);
  }
}

bool PodAffinityFilter::Resolvable(const char* reason) {
  return std::string_view(reason) != "node(s) didn't match pod affinity rules";
}

const char* PodAffinityFilter::Check(const TaskInfo& t, const NodeInfo& n) {
  Prepare(t);
  if (!concerned_) return nullptr;
  const Placement& p = *t.placement;
  // Every topology key must be on the node; then a pod matching all terms
  // must be in each domain, unless no such pod exists anywhere and the pod
  // matches its own terms (the first pod of a group).
  bool pods_exist = true;
  for (const auto& term : p.pod_affinity) {
    const std::string* v = Label(n, term.topology_key);
    if (!v) return "node(s) didn't match pod affinity rules";
    if (!affinity_.contains({term.topology_key, *v})) pods_exist = false;
  }
  if (!pods_exist) {
    bool self_match = affinity_.empty();
    const Labels& ns_labels = ssn_.cache().NamespaceLabels(t.ns);
    for (const auto& term : p.pod_affinity) self_match = self_match && term.MatchesPod(t.ns, t.ns, t.labels, ns_labels);
    if (!self_match) return "node(s) didn't match pod affinity rules";
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
