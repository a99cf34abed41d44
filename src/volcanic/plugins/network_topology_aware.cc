// network-topology-aware (Volcano v1.15.1 pkg/scheduler/plugins/
// network-topology-aware): where a gang with a network topology may go, tier
// by tier (HyperNodeGradient), which HyperNode it packs best
// (HyperNodeOrder), and node scores: for a gang's pod, nodes closer to where
// its gang already is; for other pods, nodes in fuller HyperNodes of every
// tier, lower tiers weighing more (hypernode.binpack.normal-pod.*).
//
// As in Volcano, each HyperNode's allocatable, used, idle and future-idle
// resources are summed when the session opens; only `used` follows the
// session's placements. Scores are x100 x weight.
#include <algorithm>
#include <cmath>
#include <deque>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "volcanic/framework/session.h"
#include "volcanic/plugins/plugins.h"

namespace volcanic {
namespace {

struct Args {
  double weight = 1;
  std::vector<std::pair<ResourceId, double>> binpack;  // cpu, memory, then hypernode.binpack.resources
  bool normal_pods = true;
  double fading = 0.8;
  int64_t evict_max = 8;
};

class NetworkTopologyAware : public Plugin {
 public:
  explicit NetworkTopologyAware(Args args) : args_(std::move(args)) {}

  void OnSessionOpen(PluginHandle& h) override {
    ssn_ = &h.session();
    tree_ = &ssn_->topology().tree();
    SumResources();
    h.AddHyperNodeGradientFn([this](const TopologyUnit& u, int hn, SearchPurpose p) { return Gradient(u, hn, p); });
    h.AddHyperNodeOrderFn([this](const TopologyUnit& u, absl::Span<const int> hns, std::vector<double>* scores) {
      ScoreHyperNodes(u, hns, scores);
    });
    h.AddBatchNodeOrderFn([this](const TaskInfo& t, absl::Span<NodeInfo* const> nodes, std::vector<double>* scores) {
      ScoreNodes(t, nodes, scores);
    });
    h.AddEventHandler([this](const TaskInfo& t) { Count(t, +1); }, [this](const TaskInfo& t) { Count(t, -1); });
    // Other pods' scores follow the HyperNodes' use, which every placement changes.
    if (!args_.normal_pods) h.SetNodeLocal([this](const TaskInfo& t) { return !GangOf(t) || !GangOf(t)->with_topology; });
  }

 private:
  struct Sums {
    Resource allocatable, used, idle, future_idle;
  };

  void SumResources() {
    sums_.assign(tree_->size(), {});
    for (int i = 0; i < tree_->size(); ++i)
      for (int n : tree_->at(i).nodes) {
        const NodeInfo& node = *ssn_->nodes()[n];
        sums_[i].allocatable += node.allocatable;
        sums_[i].used += node.used;
        sums_[i].idle += node.idle;
        sums_[i].future_idle += node.FutureIdle();
      }
    min_tier_ = tree_->tiers().front();
    max_tier_ = tree_->tiers().back();
  }

  // A placement adds to (and its undoing takes from) every HyperNode holding
  // the node: the node's lowest HyperNode and its ancestors.
  void Count(const TaskInfo& t, int sign) {
    int node = t.node ? t.node->index : -1;
    if (sign > 0) {
      counted_[&t] = node;
    } else if (auto it = counted_.find(&t); it != counted_.end()) {
      if (node < 0) node = it->second;
      counted_.erase(it);
    }
    if (node < 0) return;
    int steps = tree_->size();
    for (int hn = tree_->Lowest(node); hn != HyperNodeTree::kNone && steps-- > 0; hn = tree_->at(hn).parent) {
      if (sign > 0) {
        sums_[hn].used += t.resreq;
      } else {
        sums_[hn].used -= t.resreq;
      }
    }
  }

  std::optional<HyperNodeGradients> Gradient(const TopologyUnit& u, int given, SearchPurpose purpose) const {
    if (!u.limit.hard) return HyperNodeGradients{{given}};
    int root = SearchRoot(given, u.limit.highest_tier, u.allocated);
    if (root == HyperNodeTree::kNone) return HyperNodeGradients{};
    std::map<int32_t, std::vector<int>> by_tier;
    std::deque<int> queue = {root};
    while (!queue.empty()) {
      int hn = queue.front();
      queue.pop_front();
      if (Eligible(hn, u, purpose)) by_tier[tree_->at(hn).tier].push_back(hn);
      for (int child : tree_->at(hn).children) queue.push_back(child);
    }
    HyperNodeGradients out;
    for (auto& [tier, hns] : by_tier) out.push_back(std::move(hns));
    if (purpose == SearchPurpose::kEvict) return WidestFirst(std::move(out));
    return out;
  }

  // getSearchRoot: `given`, narrowed to the ancestor at the limit of where
  // the gang already is; kNone when they do not nest.
  int SearchRoot(int given, int32_t limit, int allocated) const {
    if (allocated == HyperNodeTree::kNone) return given;
    int highest = HyperNodeTree::kNone;
    for (int hn : tree_->Ancestors(allocated)) {
      if (tree_->at(hn).tier > limit) break;
      highest = hn;
    }
    if (highest == HyperNodeTree::kNone) return HyperNodeTree::kNone;
    int lca = tree_->Lca(given, highest);
    if (lca == highest) return given;
    if (lca == given) return highest;
    return HyperNodeTree::kNone;
  }

  bool Eligible(int hn, const TopologyUnit& u, SearchPurpose purpose) const {
    if (tree_->at(hn).tier > u.limit.highest_tier) return false;
    if (u.allocated != HyperNodeTree::kNone) return true;  // partly running: no pre-filter
    const Sums& s = sums_[hn];
    if (purpose == SearchPurpose::kEvict) return u.min_resource.LessEqual(s.allocatable);
    return u.min_resource.LessEqual(s.idle) || u.min_resource.LessEqual(s.future_idle);
  }

  // reverseAndCapEvictionGradients: widest tiers first, at most evict_max HyperNodes.
  HyperNodeGradients WidestFirst(HyperNodeGradients in) const {
    HyperNodeGradients out;
    int64_t left = args_.evict_max;
    for (auto it = in.rbegin(); it != in.rend() && left > 0; ++it) {
      if (static_cast<int64_t>(it->size()) > left) it->erase(it->begin(), it->end() - left);
      left -= static_cast<int64_t>(it->size());
      out.push_back(std::move(*it));
    }
    return out;
  }

  // The binpack score of `request` in the HyperNode: 0 if it overflows any
  // weighted resource (Volcano's getSubJobHyperNodeBinPackingScore and
  // getPodHyperNodeBinPackingScore).
  double Binpack(int hn, const Resource& request) const {
    const Sums& s = sums_[hn];
    double score = 0, weights = 0;
    for (const auto& [r, w] : args_.binpack) {
      int64_t req = request.Get(r);
      if (req <= 0) continue;
      double alloc = static_cast<double>(s.allocatable.Get(r)), after = static_cast<double>(s.used.Get(r) + req);
      if (after > alloc) return 0;
      score += w * after / alloc;
      weights += w;
    }
    return weights > 0 ? score / weights : 0;
  }

  // How many of the gang's pods each HyperNode holds (a pod counts in its
  // node's lowest HyperNode and their ancestors), for the tie-break.
  absl::flat_hash_map<int, int> PodsPerHyperNode(const std::vector<TaskInfo*>& tasks) const {
    absl::flat_hash_map<int, int> on;
    for (const TaskInfo* t : tasks)
      if (t->node && t->node->index >= 0)
        for (int hn : tree_->Ancestors(tree_->Lowest(t->node->index))) ++on[hn];
    return on;
  }

  // Volcano's tie-break: when several entries share the best score, each of
  // them gains the share of the gang's pods its HyperNode holds.
  template <typename HyperNodeOf>
  void BreakTies(std::vector<double>& raw, const std::vector<TaskInfo*>& tasks, HyperNodeOf hypernode_of) const {
    double best = *std::max_element(raw.begin(), raw.end());
    if (tasks.empty() || std::count(raw.begin(), raw.end(), best) < 2) return;
    absl::flat_hash_map<int, int> on = PodsPerHyperNode(tasks);
    for (size_t i = 0; i < raw.size(); ++i) {
      auto it = raw[i] == best ? on.find(hypernode_of(i)) : on.end();
      if (it != on.end()) raw[i] += static_cast<double>(it->second) / static_cast<double>(tasks.size());
    }
  }

  void ScoreHyperNodes(const TopologyUnit& u, absl::Span<const int> hns, std::vector<double>* scores) const {
    if (hns.empty()) return;
    Resource request;
    for (const TaskInfo* t : u.tasks) request += t->resreq;
    std::vector<double> raw;
    for (int hn : hns) raw.push_back(Binpack(hn, request));
    BreakTies(raw, u.tasks, [&](size_t i) { return hns[i]; });
    for (size_t i = 0; i < raw.size(); ++i) (*scores)[i] += Scaled(raw[i]);
  }

  void ScoreNodes(const TaskInfo& t, absl::Span<NodeInfo* const> nodes, std::vector<double>* scores) const {
    if (nodes.empty()) return;
    std::vector<double> raw(nodes.size(), 0.0);
    if (const TopologyUnit* gang = GangOf(t); gang && gang->with_topology) {
      int placing = ssn_->topology().Placing(t);
      if (placing == HyperNodeTree::kNone) return;
      for (size_t i = 0; i < nodes.size(); ++i) raw[i] = Closeness(tree_->LeafOf(nodes[i]->index), placing);
      BreakTies(raw, gang->tasks, [&](size_t i) { return tree_->LeafOf(nodes[i]->index); });
    } else if (args_.normal_pods) {
      for (size_t i = 0; i < nodes.size(); ++i) raw[i] = Fullness(t, nodes[i]->index);
    } else {
      return;
    }
    for (size_t i = 0; i < raw.size(); ++i) (*scores)[i] += Scaled(raw[i]);
  }

  // The task's gang, for a job with a topology or gangs of its own.
  const TopologyUnit* GangOf(const TaskInfo& t) const {
    if (!t.job || (!t.job->network_topology && t.job->sub_group_policies.empty())) return nullptr;
    JobGangs& g = ssn_->topology().GangsOf(*t.job);
    auto it = g.gang_of.find(&t);
    return it == g.gang_of.end() ? nullptr : &g.gangs[it->second];
  }

  // networkTopologyAwareScore: 1 in the gang's HyperNode, else by the tier of
  // the lowest HyperNode holding both, lower tiers scoring higher.
  double Closeness(int leaf, int gang) const {
    if (leaf == HyperNodeTree::kNone) return 0;
    if (leaf == gang) return 1;
    int lca = tree_->Lca(leaf, gang);
    if (lca == HyperNodeTree::kNone) return 0;
    int32_t tier = tree_->at(lca).tier;
    if (min_tier_ == max_tier_) return 1;
    if (tier < min_tier_ || tier > max_tier_) return 0;
    return static_cast<double>(max_tier_ - tier) / static_cast<double>(max_tier_ - min_tier_);
  }

  // batchNodeOrderFnForNormalPods: the tiers' binpack scores of the
  // HyperNodes holding the node, tier t weighing fading^(t-1); a tier without
  // one counts as full.
  double Fullness(const TaskInfo& t, int node) const {
    double total = 0, weights = 0;
    const auto& tiers = tree_->tiers();
    for (int32_t tier = min_tier_; tier <= max_tier_; ++tier) {
      double w = std::pow(args_.fading, tier - 1);
      auto pos = std::lower_bound(tiers.begin(), tiers.end(), tier);
      int hn = pos != tiers.end() && *pos == tier ? tree_->AtTier(node, pos - tiers.begin()) : HyperNodeTree::kNone;
      total += w * (hn == HyperNodeTree::kNone ? 1.0 : Binpack(hn, t.resreq));
      weights += w;
    }
    return weights > 0 ? total / weights : 0;
  }

  double Scaled(double raw) const { return raw * 100 * args_.weight; }

  Args args_;
  Session* ssn_ = nullptr;
  const HyperNodeTree* tree_ = nullptr;
  std::vector<Sums> sums_;
  int32_t min_tier_ = 0, max_tier_ = 0;
  absl::flat_hash_map<const TaskInfo*, int> counted_;  // task -> node index it was counted on
};

}  // namespace

PluginOr NewNetworkTopologyAwarePlugin(const Arguments& args) {
  constexpr char kResources[] = "hypernode.binpack.resources";
  if (auto s = args.CheckKnown({"weight", "hypernode.binpack.cpu", "hypernode.binpack.memory", kResources,
                                "hypernode.binpack.normal-pod.enable", "hypernode.binpack.normal-pod.fading",
                                "hypernode.gradient.evict.max-hypernodes"},
                               {"hypernode.binpack.resources."});
      !s.ok())
    return s;
  // Volcano resets a negative weight to 1, a negative fading to 0.8 and a
  // non-positive eviction cap to 8.
  auto positive = [&](const char* key) -> absl::StatusOr<double> {
    auto v = args.Int(key, 1);
    if (!v.ok()) return v.status();
    return *v < 0 ? 1.0 : static_cast<double>(*v);
  };
  Args out;
  auto weight = positive("weight"), cpu = positive("hypernode.binpack.cpu"), mem = positive("hypernode.binpack.memory");
  auto extra = args.String(kResources, "");
  auto normal = args.Bool("hypernode.binpack.normal-pod.enable", true);
  auto fading = args.Float("hypernode.binpack.normal-pod.fading", 0.8);
  auto evict = args.Int("hypernode.gradient.evict.max-hypernodes", 8);
  for (const auto* s : {&weight, &cpu, &mem})
    if (!s->ok()) return s->status();
  if (!extra.ok()) return extra.status();
  if (!normal.ok()) return normal.status();
  if (!fading.ok()) return fading.status();
  if (!evict.ok()) return evict.status();
  out.weight = *weight;
  out.binpack = {{kCpu, *cpu}, {kMemory, *mem}};
  for (absl::string_view name : absl::StrSplit(*extra, ',', absl::SkipWhitespace())) {
    std::string n(absl::StripAsciiWhitespace(name));
    auto w = positive(("hypernode.binpack.resources." + n).c_str());
    if (!w.ok()) return w.status();
    out.binpack.emplace_back(ResourceNames::Intern(n), *w);
  }
  out.normal_pods = *normal;
  out.fading = *fading < 0 ? 0.8 : *fading;
  out.evict_max = *evict <= 0 ? 8 : *evict;
  return std::make_unique<NetworkTopologyAware>(std::move(out));
}

}  // namespace volcanic
