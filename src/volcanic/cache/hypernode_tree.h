// The HyperNodes over the Ready nodes, as a Volcano session sees them
// (pkg/scheduler/api/hyper_node_info.go, framework/session.go
// addClusterTopHyperNode): each HyperNode's real nodes (its Node members and
// its child HyperNodes' nodes), parents and children, and the virtual top
// Volcano adds above every HyperNode without a parent, at one tier above the
// highest, holding every Ready node.
//
// Members: a Node member matches node names exactly, by a regular
// expression (ECMAScript, searched anywhere in the name as Go's
// MatchString does; a pattern that does not compile matches nothing) or by
// labels (an empty selector matches nothing, as in Volcano); a HyperNode
// member is honoured by exact name only. A cycle or a HyperNode with two
// parents makes the tree not ready: Volcano then leaves every job with a
// network topology unscheduled.
// Cost: Build is O(members + nodes x regex/label members); a lookup is
// O(log nodes) (Contains) or O(depth) (Lca).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "volcanic/api/topology.h"
#include "volcanic/api/types.h"

namespace volcanic {

class HyperNodeTree {
 public:
  static constexpr int kNone = -1;
  static constexpr char kTopName[] = "<cluster-top-hypernode>";  // Volcano's ClusterTopHyperNode

  struct HyperNode {
    std::string name;
    int32_t tier = 0;
    std::string tier_name;
    int parent = kNone;
    std::vector<int> children;
    std::vector<int> nodes;  // indices among the Ready nodes, ascending (by name)
  };

  // `ready`: the cache's Ready nodes, each NodeInfo::index its position.
  void Build(const absl::btree_map<std::string, HyperNodeSpec>& specs, const std::vector<NodeInfo*>& ready);

  // Whether any HyperNode object exists (the top is always there).
  bool has_hypernodes() const { return hypernodes_.size() > 1; }
  bool ready() const { return ready_; }
  int top() const { return static_cast<int>(hypernodes_.size()) - 1; }
  int size() const { return static_cast<int>(hypernodes_.size()); }
  const HyperNode& at(int i) const { return hypernodes_[i]; }
  int Find(absl::string_view name) const;
  // Distinct tiers, ascending, the top's last (Volcano's HyperNodesTiers).
  const std::vector<int32_t>& tiers() const { return tiers_; }
  // The tier of a tierName (the last HyperNode of that name wins, as in Volcano).
  std::optional<int32_t> TierNamed(const std::string& name) const;
  bool Contains(int hypernode, int node_index) const;
  // The HyperNode of the lowest tier holding the node (Volcano's
  // FindHyperNodeForNode, which looks at that tier only), or kNone.
  int LeafOf(int node_index) const {
    return node_index >= 0 && node_index < static_cast<int>(leaf_.size()) ? leaf_[node_index] : kNone;
  }
  // The HyperNode of the lowest tier that holds the node (the top at worst).
  int Lowest(int node_index) const;
  // The HyperNode holding the node at the given position of tiers(), or kNone.
  int AtTier(int node_index, size_t tier_position) const;
  // The lowest common ancestor, self included; kNone counts as the other.
  int Lca(int a, int b) const;
  // `from` and its ancestors, lowest first.
  std::vector<int> Ancestors(int from) const;

 private:
  void Link(const absl::btree_map<std::string, HyperNodeSpec>& specs);
  struct Sources {
    const std::vector<NodeInfo*>& ready;
    const absl::flat_hash_map<absl::string_view, int>& node_by_name;
    const absl::btree_map<std::string, HyperNodeSpec>& specs;
  };
  bool Collect(int i, std::vector<uint8_t>& state, const Sources& from);
  void IndexTiers(size_t nodes);

  std::vector<HyperNode> hypernodes_;
  absl::flat_hash_map<std::string, int> by_name_;
  absl::flat_hash_map<std::string, int32_t> tier_by_name_;
  std::vector<int32_t> tiers_;
  std::vector<int> leaf_;              // per Ready node
  std::vector<std::vector<int>> at_tier_;  // per tier position, per Ready node
  bool ready_ = true;
};

}  // namespace volcanic
