// nodeorder (reference §4.6, research §4.2-4.3): kube-scheduler's scores with
// Volcano's weights. Per node: LeastAllocated, MostAllocated,
// BalancedAllocation and preferred node affinity (raw, not normalized); over
// the candidate nodes: TaintToleration and PodTopologySpread
// (topology_spread.h), normalized.
// All but these two are node-local; TaintToleration is too when no node has
// a PreferNoSchedule taint the pod does not tolerate (then it is the same
// 100 × weight everywhere), PodTopologySpread when the pod has no
// ScheduleAnyway constraint (then it adds nothing).
#include <cmath>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "volcanic/framework/session.h"
#include "volcanic/plugins/plugins.h"
#include "volcanic/plugins/topology_spread.h"

namespace volcanic {
namespace {

constexpr int64_t kMaxNodeScore = 100;

struct Weights {
  int64_t least = 1, most = 0, affinity = 2, balanced = 1, taint = 3, spread = 2;
};

// kube-scheduler's integer formulas; 128-bit products so large nodes
// cannot overflow.
int64_t LeastScore(int64_t requested, int64_t capacity) {
  if (capacity <= 0 || requested > capacity) return 0;
  return static_cast<int64_t>(static_cast<__int128>(capacity - requested) * kMaxNodeScore / capacity);
}

int64_t MostScore(int64_t requested, int64_t capacity) {
  if (capacity <= 0) return 0;
  return static_cast<int64_t>(static_cast<__int128>(std::min(requested, capacity)) * kMaxNodeScore / capacity);
}

class NodeOrderPlugin : public Plugin {
 public:
  explicit NodeOrderPlugin(Weights w) : w_(w) {}

  void OnSessionOpen(PluginHandle& h) override {
    Session& ssn = h.session();
    tainted_nodes_ = &ssn.cache().TaintedReadyNodes();
    h.AddNodeOrderFn([this](const TaskInfo& t, const NodeInfo& n) { return Score(t, n); });
    if (w_.spread != 0) spread_ = std::make_unique<TopologySpread>(ssn);
    if (w_.taint != 0 || spread_)
      h.AddBatchNodeOrderFn([this](const TaskInfo& t, absl::Span<NodeInfo* const> nodes, std::vector<double>* scores) {
        if (w_.taint != 0) TaintScores(t, nodes, scores);
        if (spread_ && TopologySpread::Applies(t)) spread_->Add(t, nodes, w_.spread, scores);
      });
    // The node score is node-local; the batch's taint and spread scores are
    // unless they depend on the other nodes of the batch.
    h.SetNodeLocal([this](const TaskInfo& t) {
      return (w_.taint == 0 || TaintsUniform(t)) && !(spread_ && TopologySpread::Applies(t));
    });
  }

 private:
  double Score(const TaskInfo& t, const NodeInfo& n) const {
    int64_t alloc_cpu = n.allocatable.Get(kCpu), alloc_mem = n.allocatable.Get(kMemory);
    int64_t req_cpu = n.nonzero_cpu + t.nonzero_cpu, req_mem = n.nonzero_mem + t.nonzero_mem;
    double score = 0;
    if (w_.least != 0)
      score += static_cast<double>((LeastScore(req_cpu, alloc_cpu) + LeastScore(req_mem, alloc_mem)) / 2 * w_.least);
    if (w_.most != 0)
      score += static_cast<double>((MostScore(req_cpu, alloc_cpu) + MostScore(req_mem, alloc_mem)) / 2 * w_.most);
    if (w_.balanced != 0) score += static_cast<double>(Balanced(t, n) * w_.balanced);
    if (w_.affinity != 0 && !t.placement->preferred_terms.empty())
      score += static_cast<double>(t.placement->PreferredAffinityScore(n.name, n.labels) * w_.affinity);
    return score;
  }

  // BalancedAllocation over cpu, memory and a GPU the pod asks for.
  static int64_t Balanced(const TaskInfo& t, const NodeInfo& n) {
    static const ResourceId kGpu = ResourceNames::Intern("nvidia.com/gpu");
    double f[3];
    int k = 0;
    for (ResourceId r : {kCpu, kMemory, kGpu}) {
      int64_t alloc = n.allocatable.Get(r);
      if (alloc <= 0 || (r == kGpu && t.resreq.Get(r) <= 0)) continue;
      int64_t requested = n.used.Get(r) + n.pipelined.Get(r) + t.resreq.Get(r);
      f[k++] = std::min(1.0, static_cast<double>(requested) / static_cast<double>(alloc));
    }
    double std = 0;
    if (k == 2) {
      std = std::abs(f[0] - f[1]) / 2;
    } else if (k > 2) {
      double mean = (f[0] + f[1] + f[2]) / 3, var = 0;
      for (int i = 0; i < k; ++i) var += (f[i] - mean) * (f[i] - mean);
      std = std::sqrt(var / k);
    }
    return static_cast<int64_t>((1 - std) * kMaxNodeScore);
  }

  // Counted twice rather than stored: this runs once per refreshed node on
  // the hot path, where an allocation would cost more than the count.
  void TaintScores(const TaskInfo& t, absl::Span<NodeInfo* const> nodes, std::vector<double>* scores) const {
    int64_t max = 0;
    for (const NodeInfo* n : nodes) max = std::max<int64_t>(max, t.placement->CountIntolerablePreferNoSchedule(n->taints));
    for (size_t i = 0; i < nodes.size(); ++i) {
      int64_t count = max == 0 ? 0 : t.placement->CountIntolerablePreferNoSchedule(nodes[i]->taints);
      int64_t s = max == 0 ? kMaxNodeScore : kMaxNodeScore - kMaxNodeScore * count / max;
      (*scores)[i] += static_cast<double>(s * w_.taint);
    }
  }

  // Whether no node has a PreferNoSchedule taint the task does not tolerate:
  // then every node scores the same and the score is node-local. Only the
  // tainted nodes (the cache keeps them) are looked at.
  bool TaintsUniform(const TaskInfo& t) {
    auto [it, inserted] = uniform_.try_emplace(t.class_id, true);
    if (inserted)
      for (const NodeInfo* n : *tainted_nodes_)
        if (t.placement->CountIntolerablePreferNoSchedule(n->taints) > 0) it->second = false;
    return it->second;
  }

  Weights w_;
  std::unique_ptr<TopologySpread> spread_;  // when its weight is not 0
  const std::vector<NodeInfo*>* tainted_nodes_ = nullptr;  // the session's
  absl::flat_hash_map<int32_t, bool> uniform_;  // by task class
};

}  // namespace

PluginOr NewNodeOrderPlugin(const Arguments& args) {
  if (auto s = args.CheckKnown({"leastrequested.weight", "mostrequested.weight", "nodeaffinity.weight",
                                "podaffinity.weight", "balancedresource.weight", "tainttoleration.weight",
                                "imagelocality.weight", "podtopologyspread.weight"});
      !s.ok())
    return s;
  Weights w;
  for (auto [key, field] : {std::pair{"leastrequested.weight", &w.least}, {"mostrequested.weight", &w.most},
                            {"nodeaffinity.weight", &w.affinity}, {"balancedresource.weight", &w.balanced},
                            {"tainttoleration.weight", &w.taint}, {"podtopologyspread.weight", &w.spread}}) {
    auto v = args.Int(key, *field);
    if (!v.ok()) return v.status();
    *field = *v;
  }
  for (const char* key : {"podaffinity.weight", "imagelocality.weight"})
    if (auto v = args.Int(key, 0); !v.ok()) return v.status();
  return std::make_unique<NodeOrderPlugin>(w);
}

}  // namespace volcanic
