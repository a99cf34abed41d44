#include "volcanic/cache/hypernode_tree.h"

#include <algorithm>
#include <regex>

namespace volcanic {
namespace {

// The Ready nodes a Node member selects.
void MatchNodes(const HyperNodeMember& m, const std::vector<NodeInfo*>& ready,
                const absl::flat_hash_map<absl::string_view, int>& by_name, std::vector<int>* out) {
  switch (m.match) {
    case HyperNodeMember::Match::kExact:
      if (auto it = by_name.find(m.text); it != by_name.end()) out->push_back(it->second);
      return;
    case HyperNodeMember::Match::kRegex: {
      std::regex re;
      try {
        re = std::regex(m.text);
      } catch (const std::regex_error&) {
        return;  // the webhook refuses it; one that got in matches nothing
      }
      for (const NodeInfo* n : ready)
        if (std::regex_search(n->name, re)) out->push_back(n->index);
      return;
    }
    case HyperNodeMember::Match::kLabel:
      if (m.labels.match_labels.empty() && m.labels.match_expressions.empty()) return;
      for (const NodeInfo* n : ready)
        if (m.labels.Matches(n->labels)) out->push_back(n->index);
      return;
  }
}

template <typename T>
void SortUnique(std::vector<T>* v) {
  std::sort(v->begin(), v->end());
  v->erase(std::unique(v->begin(), v->end()), v->end());
}

}  // namespace

void HyperNodeTree::Build(const absl::btree_map<std::string, HyperNodeSpec>& specs,
                          const std::vector<NodeInfo*>& ready) {
  *this = HyperNodeTree();
  int32_t highest = 0;
  for (const auto& [name, spec] : specs) {
    by_name_[name] = static_cast<int>(hypernodes_.size());
    HyperNode h;
    h.name = name;
    h.tier = spec.tier;
    h.tier_name = spec.tier_name;
    hypernodes_.push_back(std::move(h));
    if (!spec.tier_name.empty()) tier_by_name_[spec.tier_name] = spec.tier;
    highest = std::max(highest, spec.tier);
  }
  Link(specs);
  for (HyperNode& h : hypernodes_) SortUnique(&h.children);  // by name: indices follow names
  absl::flat_hash_map<absl::string_view, int> node_by_name;
  for (const NodeInfo* n : ready) node_by_name[n->name] = n->index;
  std::vector<uint8_t> state(hypernodes_.size(), 0);
  for (int i = 0; i < static_cast<int>(hypernodes_.size()); ++i) {
    if (!Collect(i, state, {ready, node_by_name, specs})) ready_ = false;
  }
  HyperNode top;
  top.name = kTopName;
  top.tier = specs.empty() ? 1 : highest + 1;
  for (int i = 0; i < static_cast<int>(hypernodes_.size()); ++i)
    if (hypernodes_[i].parent == kNone) {
      hypernodes_[i].parent = static_cast<int>(hypernodes_.size());
      top.children.push_back(i);
    }
  for (const NodeInfo* n : ready) top.nodes.push_back(n->index);
  by_name_[top.name] = static_cast<int>(hypernodes_.size());
  hypernodes_.push_back(std::move(top));
  IndexTiers(ready.size());
}

void HyperNodeTree::Link(const absl::btree_map<std::string, HyperNodeSpec>& specs) {
  for (const auto& [name, spec] : specs) {
    int parent = by_name_.at(name);
    for (const HyperNodeMember& m : spec.members) {
      if (m.type != HyperNodeMember::Type::kHyperNode || m.match != HyperNodeMember::Match::kExact) continue;
      auto it = by_name_.find(m.text);
      if (it == by_name_.end()) continue;  // not (yet) created: no child
      HyperNode& child = hypernodes_[it->second];
      if (child.parent == parent) continue;
      if (child.parent != kNone || it->second == parent) ready_ = false;  // two parents, or its own
      child.parent = parent;
      hypernodes_[parent].children.push_back(it->second);
    }
  }
}

// Fills hypernodes_[i].nodes (depth first); false on a cycle.
bool HyperNodeTree::Collect(int i, std::vector<uint8_t>& state, const Sources& from) {
  if (state[i] == 2) return true;
  if (state[i] == 1) return false;
  state[i] = 1;
  bool acyclic = true;
  HyperNode& h = hypernodes_[i];
  std::vector<int> nodes;
  for (const HyperNodeMember& m : from.specs.at(h.name).members)
    if (m.type == HyperNodeMember::Type::kNode) MatchNodes(m, from.ready, from.node_by_name, &nodes);
  for (int child : h.children) {
    acyclic = Collect(child, state, from) && acyclic;
    const auto& more = hypernodes_[child].nodes;
    nodes.insert(nodes.end(), more.begin(), more.end());
  }
  SortUnique(&nodes);
  hypernodes_[i].nodes = std::move(nodes);
  state[i] = 2;
  return acyclic;
}

void HyperNodeTree::IndexTiers(size_t nodes) {
  for (const HyperNode& h : hypernodes_) tiers_.push_back(h.tier);
  SortUnique(&tiers_);
  at_tier_.assign(tiers_.size(), std::vector<int>(nodes, kNone));
  for (int i = 0; i < static_cast<int>(hypernodes_.size()); ++i) {
    size_t p = std::lower_bound(tiers_.begin(), tiers_.end(), hypernodes_[i].tier) - tiers_.begin();
    for (int n : hypernodes_[i].nodes)
      if (at_tier_[p][n] == kNone) at_tier_[p][n] = i;  // the first by name, where Volcano picks any
  }
  leaf_ = at_tier_.empty() ? std::vector<int>(nodes, kNone) : at_tier_[0];
}

int HyperNodeTree::Find(absl::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? kNone : it->second;
}

std::optional<int32_t> HyperNodeTree::TierNamed(const std::string& name) const {
  auto it = tier_by_name_.find(name);
  if (it == tier_by_name_.end()) return std::nullopt;
  return it->second;
}

bool HyperNodeTree::Contains(int hypernode, int node_index) const {
  const auto& nodes = hypernodes_[hypernode].nodes;
  return std::binary_search(nodes.begin(), nodes.end(), node_index);
}

int HyperNodeTree::AtTier(int node_index, size_t tier_position) const {
  if (tier_position >= at_tier_.size() || node_index < 0) return kNone;
  const auto& v = at_tier_[tier_position];
  return node_index < static_cast<int>(v.size()) ? v[node_index] : kNone;
}

int HyperNodeTree::Lowest(int node_index) const {
  for (size_t p = 0; p < at_tier_.size(); ++p)
    if (int h = AtTier(node_index, p); h != kNone) return h;
  return top();
}

std::vector<int> HyperNodeTree::Ancestors(int from) const {
  std::vector<int> out;
  // Bounded by the count: a cycle (a tree not ready) must not loop forever.
  for (int i = from; i != kNone && out.size() < hypernodes_.size(); i = hypernodes_[i].parent) out.push_back(i);
  return out;
}

int HyperNodeTree::Lca(int a, int b) const {
  if (a == kNone) return b;
  if (b == kNone) return a;
  // Walks parent links (no allocation: node scores ask this per node); the
  // counts bound the walks on a tree that is not ready (a cycle).
  int steps = size();
  for (int x = a; x != kNone && steps-- > 0; x = hypernodes_[x].parent) {
    int inner = size();
    for (int y = b; y != kNone && inner-- > 0; y = hypernodes_[y].parent)
      if (x == y) return x;
  }
  return kNone;
}

}  // namespace volcanic
