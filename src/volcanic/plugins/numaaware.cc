// numa-aware (Volcano's pkg/scheduler/plugins/numaaware): a Guaranteed pod
// goes only where the kubelet's CPU manager (static policy) and topology
// manager would admit it, from the node's Numatopology (api/numa.h).
//
// Filter: a pod annotated volcano.sh/numa-topology-policy (other than none)
// needs a node with a Numatopology, CPU manager policy static, the same
// topology-manager policy and free CPUs; a Guaranteed pod without it is
// checked only on nodes with policy static and a topology-manager policy
// other than none. Each container in turn gets CPU hints and the node's
// policy decides (numa_policy.h); a container not admitted fails the node
// (unresolvable, as in Volcano); an admitted one takes its CPUs, which the
// next containers do not see.
// Score (pods with the annotation): fewer NUMA nodes spanned by the CPUs the
// pod would get scores higher, normalized to 0-100 over the batch, times
// `weight`.
// State: the CPUs of the pods it places leave the node's free CPUs for the
// rest of the session and, at close, for later sessions until the node's
// next report (NumaNode).
// Cost: nothing for pods that are not Guaranteed (node-local, no hook work);
// for Guaranteed pods, per node, the hints and assignment of each container,
// kept until the node's free CPUs change.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "volcanic/framework/session.h"
#include "volcanic/plugins/numa_policy.h"
#include "volcanic/plugins/plugins.h"

namespace volcanic {
namespace {

constexpr char kPolicyAnnotation[] = "volcano.sh/numa-topology-policy";
constexpr int64_t kMaxNodeScore = 100;

// A node's NUMA layout in this session.
struct NodeView {
  const NumaTopology* topo = nullptr;
  std::optional<CpuSet> free;
  std::vector<int> numa_ids;
  uint64_t version = 0;  // bumped when `free` changes
};

// The CPUs a pod would get on a node, or the container that cannot be placed.
struct Assignment {
  uint64_t version = 0;
  std::optional<CpuSet> cpus;
  std::string refused;  // the container, when cpus is nullopt
};

std::string PolicyOf(const TaskInfo& t) {
  auto it = t.annotations.find(kPolicyAnnotation);
  return it == t.annotations.end() ? "" : it->second;
}

bool HasPolicy(const std::string& policy) { return !policy.empty() && policy != "none"; }

class NumaAwarePlugin : public Plugin {
 public:
  explicit NumaAwarePlugin(int64_t weight) : weight_(weight) {}

  void OnSessionOpen(PluginHandle& h) override {
    Session& ssn = h.session();
    for (auto& [name, numa] : ssn.cache().numa_nodes()) {
      numa.Refresh();
      const NodeInfo* node = ssn.cache().FindNode(name);
      if (!node || node->index < 0) continue;  // not among the session's nodes
      views_[name] = {&numa.reported, numa.free, NumaNodesOf(numa.reported.cpus)};
    }
    h.AddPredicateFn([this](const TaskInfo& t, const NodeInfo& n, std::vector<std::string>* reasons) {
      return Predicate(t, n, reasons);
    });
    h.AddBatchNodeOrderFn([this](const TaskInfo& t, absl::Span<NodeInfo* const> nodes, std::vector<double>* scores) {
      Score(t, nodes, scores);
    });
    h.AddEventHandler([this](const TaskInfo& t) { Allocated(t); }, [this](const TaskInfo& t) { Deallocated(t); });
    h.SetNodeLocal([](const TaskInfo& t) { return !t.guaranteed; });
  }

  void OnSessionClose(Session& ssn) override {
    auto& numa = ssn.cache().numa_nodes();
    for (const auto& [task, placed] : placed_)
      if (auto it = numa.find(placed.first); it != numa.end()) it->second.Assign(placed.second);
  }

 private:
  // Volcano's filterNodeByPolicy: whether the pod is checked on the node
  // (else it fits), or why it does not fit.
  enum class Check { kSkip, kCheck, kMisfit };
  Check Applies(const TaskInfo& t, const NodeView* v, std::string* why) const {
    std::string policy = PolicyOf(t);
    if (!HasPolicy(policy)) {
      if (!v || v->topo->cpu_manager_policy != "static") return Check::kSkip;
      const std::string& node_policy = v->topo->topology_manager_policy;
      return node_policy.empty() || node_policy == "none" ? Check::kSkip : Check::kCheck;
    }
    if (!v) {
      *why = "numa info is empty";
    } else if (v->topo->cpu_manager_policy != "static") {
      *why = "cpu manager policy isn't static";
    } else if (policy != v->topo->topology_manager_policy) {
      *why = absl::StrCat("task topology policy[", policy, "] is different with node[",
                          v->topo->topology_manager_policy, "]");
    } else if (!v->free || v->free->empty()) {
      *why = "cpu allocatable map is empty";
    } else {
      return Check::kCheck;
    }
    return Check::kMisfit;
  }

  Verdict Predicate(const TaskInfo& t, const NodeInfo& n, std::vector<std::string>* reasons) const {
    if (!t.guaranteed) return Verdict::kFit;
    const NodeView* v = Find(n.name);
    std::string why;
    Check check = Applies(t, v, &why);
    if (check == Check::kSkip) return Verdict::kFit;
    if (check == Check::kMisfit) {
      reasons->push_back(std::move(why));
      return Verdict::kUnschedulable;
    }
    const Assignment& a = Assign(t, n.name, *v);
    if (a.cpus) return Verdict::kFit;
    reasons->push_back(absl::StrCat("container ", a.refused, " cannot be assigned by numa"));
    return Verdict::kUnresolvable;
  }

  // The CPUs the pod's containers get on the node, one container after the
  // other (Volcano's predicate), kept until the node's free CPUs change.
  const Assignment& Assign(const TaskInfo& t, const std::string& node, const NodeView& v) const {
    Assignment& a = memo_[{t.key, node}];
    if (a.version == v.version + 1) return a;
    a = {v.version + 1, CpuSet(), ""};
    std::optional<CpuSet> free = v.free;
    for (const auto& [name, cpu] : t.container_cpus) {
      std::optional<std::vector<NumaHint>> hints = CpuTopologyHints(cpu, *v.topo, free);
      ProviderHints provider;
      if (hints) provider.emplace_back("cpu", std::move(hints));
      auto [best, admit] = TopologyPolicyPredicate(v.topo->topology_manager_policy, v.numa_ids, {provider});
      if (!admit) {
        a.cpus.reset();
        a.refused = name;
        return a;
      }
      if (!free) continue;
      CpuSet got = AssignCpus(cpu, best, *v.topo, *free);
      for (int c : got) free->erase(c);
      a.cpus->insert(got.begin(), got.end());
    }
    return a;
  }

  void Score(const TaskInfo& t, absl::Span<NodeInfo* const> nodes, std::vector<double>* scores) const {
    if (!t.guaranteed || !HasPolicy(PolicyOf(t))) return;
    std::vector<int64_t> spans(nodes.size(), 0);
    int64_t widest = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const NodeView* v = Find(nodes[i]->name);
      if (!v) continue;
      const Assignment& a = Assign(t, nodes[i]->name, *v);
      if (a.cpus) spans[i] = NumaNodeCount(*a.cpus, v->topo->cpus);
      widest = std::max(widest, spans[i]);
    }
    // Volcano's NormalizeScore(100, reverse): the fewest NUMA nodes score 100.
    for (size_t i = 0; i < nodes.size(); ++i) {
      int64_t score = widest == 0 ? kMaxNodeScore : kMaxNodeScore - kMaxNodeScore * spans[i] / widest;
      (*scores)[i] += static_cast<double>(score * weight_);
    }
  }

  // Only a pod the predicate assigned CPUs (allocated or pipelined, not an
  // eviction undone) takes them.
  void Allocated(const TaskInfo& t) {
    if (!t.guaranteed || !In(t.status, Mask(TaskStatus::kAllocated) | Mask(TaskStatus::kPipelined))) return;
    NodeView* v = FindMutable(t.node_name);
    std::string why;
    if (!v || Applies(t, v, &why) != Check::kCheck) return;
    const Assignment& a = Assign(t, t.node_name, *v);
    if (!a.cpus) return;
    CpuSet cpus = *a.cpus;
    for (int c : cpus) v->free->erase(c);
    ++v->version;
    placed_[t.key] = {t.node_name, std::move(cpus)};
  }

  void Deallocated(const TaskInfo& t) {
    auto it = placed_.find(t.key);
    if (it == placed_.end()) return;
    if (NodeView* v = FindMutable(it->second.first); v && v->free) {
      v->free->insert(it->second.second.begin(), it->second.second.end());
      ++v->version;
    }
    placed_.erase(it);
  }

  const NodeView* Find(const std::string& node) const {
    auto it = views_.find(node);
    return it == views_.end() ? nullptr : &it->second;
  }
  NodeView* FindMutable(const std::string& node) {
    auto it = views_.find(node);
    return it == views_.end() ? nullptr : &it->second;
  }

  int64_t weight_;
  absl::flat_hash_map<std::string, NodeView> views_;
  // Pods placed this session: their node and CPUs.
  absl::flat_hash_map<std::string, std::pair<std::string, CpuSet>> placed_;
  // Assignments by (pod, node); a cache of a pure function of the pod and the
  // node's free CPUs, so callbacks stay answers of their arguments.
  mutable absl::flat_hash_map<std::pair<std::string, std::string>, Assignment> memo_;
};

}  // namespace

PluginOr NewNumaAwarePlugin(const Arguments& args) {
  if (auto s = args.CheckKnown({"weight"}); !s.ok()) return s;
  auto weight = args.Int("weight", 1);
  if (!weight.ok()) return weight.status();
  return std::make_unique<NumaAwarePlugin>(*weight);
}

}  // namespace volcanic
