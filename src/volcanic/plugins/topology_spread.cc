#include "volcanic/plugins/topology_spread.h"

#include <algorithm>
#include <climits>
#include <cmath>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "volcanic/framework/node_search.h"
#include "volcanic/framework/session.h"

namespace volcanic {
namespace {

constexpr char kHostname[] = "kubernetes.io/hostname";
constexpr int64_t kMaxNodeScore = 100;

bool HasKeys(const NodeInfo& n, const std::vector<std::string>& keys) {
  for (const auto& k : keys)
    if (!n.labels.contains(k)) return false;
  return true;
}

constexpr char kConstraintsNotMatch[] = "node(s) didn't match pod topology spread constraints";
constexpr char kMissingLabel[] = "node(s) didn't match pod topology spread constraints (missing required label)";

// The topology keys of the task's soft (or hard) constraints, sorted and unique.
std::vector<std::string> KeysOf(const TaskInfo& t, bool soft) {
  std::vector<std::string> keys;
  for (const auto& c : t.placement->spread)
    if (c.soft == soft) keys.push_back(c.topology_key);
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

}  // namespace

// Matching pods per session node and per domain for one constraint shape.
struct TopologySpread::Counter {
  std::string ns, key;
  LabelSelector selector;
  bool counts_nothing = false;  // no selector, or an empty one (kube counts 0)
  std::vector<char> included;   // per node: carries the keys, passes the policies
  std::vector<int32_t> per_node;
  std::vector<uint64_t> seen_version;
  absl::flat_hash_map<std::string, int64_t> per_domain;  // key's value -> pods
  size_t cursor = 0;                                     // into the change log
  uint64_t version = 0;                                  // of per_domain's counts
  uint64_t fewest_version = UINT64_MAX;
  int64_t fewest_count = 0;

  int32_t CountOn(const NodeInfo& n) const {
    if (counts_nothing) return 0;
    int32_t count = 0;
    for (const auto& [k, t] : n.tasks)
      if (t->status != TaskStatus::kReleasing && !t->terminating && t->ns == ns && selector.Matches(t->labels))
        ++count;
    return count;
  }
  void Recount(const NodeInfo& n) {
    seen_version[n.index] = n.version;
    if (!included[n.index]) return;
    int32_t now = CountOn(n);
    per_domain[n.labels.at(key)] += now - per_node[n.index];
    version += now != per_node[n.index];
    per_node[n.index] = now;
  }
  void CatchUp(const std::vector<NodeInfo*>& nodes, const std::vector<int>& changed) {
    for (; cursor < changed.size(); ++cursor) {
      const NodeInfo& n = *nodes[changed[cursor]];
      if (n.version != seen_version[n.index]) Recount(n);
    }
  }
  // The fewest matching pods in any domain (kube's critical path).
  int64_t Fewest() {
    if (fewest_version != version) {
      fewest_version = version;
      fewest_count = per_domain.empty() ? 0 : INT64_MAX;
      for (const auto& [domain, count] : per_domain) fewest_count = std::min(fewest_count, count);
    }
    return fewest_count;
  }
};

TopologySpread::TopologySpread(Session& ssn) : ssn_(ssn) {}
TopologySpread::~TopologySpread() = default;

bool TopologySpread::Applies(const TaskInfo& t) {
  for (const auto& c : t.placement->spread)
    if (c.soft) return true;
  return false;
}

bool TopologySpread::Filters(const TaskInfo& t) {
  for (const auto& c : t.placement->spread)
    if (!c.soft) return true;
  return false;
}

TopologySpread::Counter& TopologySpread::CounterFor(const TaskInfo& t, int index) {
  Counter* unused = nullptr;
  // Tasks without a class (never from the cache) skip the per-class memo.
  Counter*& memo = t.class_id >= 0 ? by_class_[{t.class_id, index}] : unused;
  if (memo) return *memo;
  const Placement& p = *t.placement;
  const SpreadConstraint& c = p.spread[index];
  const std::vector<std::string> keys = KeysOf(t, c.soft);
  bool by_affinity = c.honor_node_affinity && (!p.node_selector.empty() || !p.required_terms.empty());
  // Classes share a counter unless which nodes count depends on the pod.
  std::string id = absl::StrCat(t.ns, "|", c.topology_key, "|", SelectorKey(c.selector), "|",
                                absl::StrJoin(keys, ","), "|", by_affinity ? "a" : "-",
                                c.honor_node_taints ? "t" : "-", "|",
                                by_affinity || c.honor_node_taints ? t.class_key : "");
  auto [it, created] = counters_.try_emplace(id);
  if (!created) return *(memo = it->second.get());
  auto counter = std::make_unique<Counter>();
  counter->ns = t.ns;
  counter->key = c.topology_key;
  counter->counts_nothing = !c.selector || (c.selector->match_labels.empty() && c.selector->match_expressions.empty());
  if (c.selector) counter->selector = *c.selector;
  const auto& nodes = ssn_.nodes();
  counter->included.assign(nodes.size(), 0);
  counter->per_node.assign(nodes.size(), 0);
  counter->seen_version.assign(nodes.size(), 0);
  for (const NodeInfo* n : nodes) {
    counter->included[n->index] = HasKeys(*n, keys) &&
                                  (!by_affinity || p.MatchesNodeSelectorAndAffinity(n->name, n->labels)) &&
                                  (!c.honor_node_taints || !p.FirstUntoleratedTaint(n->taints));
    counter->Recount(*n);
  }
  counter->cursor = ssn_.node_search().changed_nodes().size();
  memo = counter.get();
  it->second = std::move(counter);
  return *memo;
}

void TopologySpread::Add(const TaskInfo& t, absl::Span<NodeInfo* const> nodes, int64_t weight,
                         std::vector<double>* scores) {
  const auto& spread = t.placement->spread;
  const std::vector<std::string> keys = KeysOf(t, true);
  ignored_.assign(nodes.size(), 0);
  size_t scored = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    ignored_[i] = !HasKeys(*nodes[i], keys);
    scored += !ignored_[i];
  }
  raw_.assign(nodes.size(), 0);
  absl::flat_hash_set<std::string_view> domains;
  for (int c = 0; c < static_cast<int>(spread.size()); ++c) {
    if (!spread[c].soft) continue;
    Counter& counter = CounterFor(t, c);
    counter.CatchUp(ssn_.nodes(), ssn_.node_search().changed_nodes());
    bool hostname = spread[c].topology_key == kHostname;
    domains.clear();
    if (!hostname)
      for (size_t i = 0; i < nodes.size(); ++i)
        if (!ignored_[i]) domains.insert(nodes[i]->labels.at(counter.key));
    double domain_weight = std::log(static_cast<double>((hostname ? scored : domains.size()) + 2));
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (ignored_[i]) continue;
      int64_t count = 0;
      if (hostname) {
        count = counter.per_node[nodes[i]->index];
      } else if (auto d = counter.per_domain.find(nodes[i]->labels.at(counter.key)); d != counter.per_domain.end()) {
        count = d->second;
      }
      raw_[i] += static_cast<double>(count) * domain_weight + (spread[c].max_skew - 1);
    }
  }
  int64_t min = INT64_MAX, max = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (ignored_[i]) continue;
    raw_[i] = std::round(raw_[i]);
    min = std::min(min, static_cast<int64_t>(raw_[i]));
    max = std::max(max, static_cast<int64_t>(raw_[i]));
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (ignored_[i]) continue;
    int64_t s = max == 0 ? kMaxNodeScore : kMaxNodeScore * (max + min - static_cast<int64_t>(raw_[i])) / max;
    (*scores)[i] += static_cast<double>(s * weight);
  }
}

const char* TopologySpread::Check(const TaskInfo& t, const NodeInfo& n, bool* unresolvable) {
  const auto& spread = t.placement->spread;
  *unresolvable = true;
  for (const auto& c : spread)
    if (!c.soft && !n.labels.contains(c.topology_key)) return kMissingLabel;
  *unresolvable = false;
  for (int i = 0; i < static_cast<int>(spread.size()); ++i) {
    const SpreadConstraint& c = spread[i];
    if (c.soft) continue;
    Counter& counter = CounterFor(t, i);
    counter.CatchUp(ssn_.nodes(), ssn_.node_search().changed_nodes());
    int64_t fewest = static_cast<int64_t>(counter.per_domain.size()) < c.min_domains ? 0 : counter.Fewest();
    int64_t self = !counter.counts_nothing && counter.selector.Matches(t.labels) ? 1 : 0;
    auto d = counter.per_domain.find(n.labels.at(c.topology_key));
    int64_t here = d == counter.per_domain.end() ? 0 : d->second;
    if (here + self - fewest > c.max_skew) return kConstraintsNotMatch;
  }
  return nullptr;
}

}  // namespace volcanic
