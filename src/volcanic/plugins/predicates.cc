// predicates (reference §4.6, research of predicates.go): the kube-scheduler
// filters Volcano wraps, in Volcano's order and with kube-scheduler's reason
// strings: pod count, NodeUnschedulable, NodeAffinity, TaintToleration (the
// first of these three to fail ends the check), NodePorts, InterPodAffinity,
// PodTopologySpread (DoNotSchedule constraints, topology_spread.h),
// VolumeBinding (volumes.h: its PreFilter as the pre-predicate, its Filter
// here, and the session binds the claims of the pods it places). All but
// the last three depend only on the pod's class and the node, so they are
// node-local; a pod that those concern is searched in full.
// Pods this session evicts no longer count towards the pod limit or hold
// their ports (Volcano removes them from the node on Deallocate), so preempt
// re-checks a node after its evictions as Volcano does (predicates.go: the
// pod number is counted on the session's NodeMap, which Statement.Evict's
// DeallocateFunc updates). Placing a pod into such a slot is pipelining; a
// pod bound now needs Idle, where Releasing pods still hold their slots
// (allocate's Idle check, backfill in node_search.cc).
#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "volcanic/framework/session.h"
#include "volcanic/plugins/plugins.h"
#include "volcanic/plugins/pod_affinity.h"
#include "volcanic/plugins/topology_spread.h"

namespace volcanic {
namespace {

bool PortsConflict(const HostPort& a, const HostPort& b) {
  if (a.port != b.port || a.protocol != b.protocol) return false;
  return a.host_ip.empty() || b.host_ip.empty() || a.host_ip == b.host_ip;
}

class PredicatesPlugin : public Plugin {
 public:
  PredicatesPlugin(bool affinity, bool taints, bool ports, bool pod_affinity, bool spread,
                   std::optional<int64_t> volume_bind_timeout_s)
      : affinity_(affinity), taints_(taints), ports_(ports), pod_affinity_(pod_affinity), spread_enabled_(spread),
        volume_bind_timeout_s_(volume_bind_timeout_s) {}

  void OnSessionOpen(PluginHandle& h) override {
    Session& ssn = h.session();
    if (pod_affinity_)
      inter_pod_ = std::make_unique<PodAffinityFilter>(ssn, [this](const TaskInfo& t) { return EvictedHere(t); });
    if (spread_enabled_) spread_ = std::make_unique<TopologySpread>(ssn);
    if (volume_bind_timeout_s_) {
      volumes_ = &ssn.cache().volumes();
      ssn.SetVolumeBindTimeout(*volume_bind_timeout_s_);
      h.AddPrePredicateFn([this](const TaskInfo& t) {
        if (t.claims.empty()) return absl::OkStatus();
        std::string why = volumes_->PreCheck(t);
        return why.empty() ? absl::OkStatus() : absl::FailedPreconditionError(why);
      });
      // kube's Reserve and Unreserve: the volumes chosen for a placed pod (volumes.h).
      h.AddReserveFn([this](TaskInfo& t, const NodeInfo& n) {
        if (!t.claims.empty()) volumes_->Reserve(&t, n);
      });
      h.AddUnreserveFn([this](TaskInfo& t) {
        if (!t.volume_choices.empty()) volumes_->Revert(&t);
      });
    }
    h.AddPredicateFn([this](const TaskInfo& t, const NodeInfo& n, std::vector<std::string>* reasons) {
      return Check(t, n, reasons);
    });
    h.SetNodeLocal([this](const TaskInfo& t) {
      return (!inter_pod_ || !inter_pod_->Concerns(t)) && !(spread_ && TopologySpread::Filters(t)) &&
             !(volumes_ && !t.claims.empty());
    });
    h.AddEventHandler([this](const TaskInfo& t) { Unevicted(t); }, [this](const TaskInfo& t) { Evicted(t); });
  }

 private:
  Verdict Check(const TaskInfo& t, const NodeInfo& n, std::vector<std::string>* reasons) {
    Verdict verdict = Verdict::kFit;
    auto evicted = evicted_.find(&n);
    const std::vector<const TaskInfo*>* gone = evicted == evicted_.end() ? nullptr : &evicted->second;
    if (n.max_pods <= n.pod_count - (gone ? static_cast<int>(gone->size()) : 0)) {
      reasons->push_back(kPodNumberExceeded);
      verdict = Verdict::kUnschedulable;
    }
    const Placement& p = *t.placement;
    static const Taint kUnschedulable{"node.kubernetes.io/unschedulable", "", "NoSchedule"};
    if (n.unschedulable && !p.toleration_index.Tolerates(kUnschedulable)) {
      reasons->push_back("node(s) were unschedulable");
      return Verdict::kUnresolvable;
    }
    if (affinity_ && !p.MatchesNodeSelectorAndAffinity(n.name, n.labels)) {
      reasons->push_back("node(s) didn't match Pod's node affinity/selector");
      return Verdict::kUnresolvable;
    }
    if (taints_) {
      if (const Taint* taint = p.FirstUntoleratedTaint(n.taints)) {
        reasons->push_back(absl::StrCat("node(s) had untolerated taint {", taint->key, ": ", taint->value, "}"));
        return Verdict::kUnresolvable;
      }
    }
    if (ports_ && PortInUse(p, n, gone)) {
      reasons->push_back("node(s) didn't have free ports for the requested pod ports");
      return Verdict::kUnschedulable;
    }
    if (inter_pod_) {
      if (const char* reason = inter_pod_->Check(t, n)) {
        reasons->push_back(reason);
        return PodAffinityFilter::Resolvable(reason) ? Verdict::kUnschedulable : Verdict::kUnresolvable;
      }
    }
    if (spread_ && TopologySpread::Filters(t)) {
      bool unresolvable = false;
      if (const char* reason = spread_->Check(t, n, &unresolvable)) {
        reasons->push_back(reason);
        return unresolvable ? Verdict::kUnresolvable : Verdict::kUnschedulable;
      }
    }
    if (volumes_ && !t.claims.empty()) {
      size_t before = reasons->size();
      volumes_->Check(t, n, reasons);
      if (reasons->size() > before) return Verdict::kUnresolvable;
    }
    return verdict;
  }

  // A wanted host port conflicts with one used on the node by a pod this
  // session has not evicted.
  static bool PortInUse(const Placement& p, const NodeInfo& n, const std::vector<const TaskInfo*>* gone) {
    for (const auto& want : p.host_ports) {
      int conflicts = 0;
      for (const auto& used : n.used_ports) conflicts += PortsConflict(want, used);
      if (gone)
        for (const TaskInfo* t : *gone)
          for (const auto& used : t->placement->host_ports) conflicts -= PortsConflict(want, used);
      if (conflicts > 0) return true;
    }
    return false;
  }

  bool EvictedHere(const TaskInfo& t) const {
    auto it = t.node ? evicted_.find(t.node) : evicted_.end();
    return it != evicted_.end() && std::find(it->second.begin(), it->second.end(), &t) != it->second.end();
  }
  void Evicted(const TaskInfo& t) {
    if (t.status == TaskStatus::kReleasing && t.node) evicted_[t.node].push_back(&t);
  }
  void Unevicted(const TaskInfo& t) {
    if (!t.node) return;
    auto it = evicted_.find(t.node);
    if (it == evicted_.end()) return;
    auto& tasks = it->second;
    tasks.erase(std::remove(tasks.begin(), tasks.end(), &t), tasks.end());
  }

  bool affinity_, taints_, ports_, pod_affinity_, spread_enabled_;
  std::optional<int64_t> volume_bind_timeout_s_;  // set: VolumeBinding is on
  Volumes* volumes_ = nullptr;
  std::unique_ptr<PodAffinityFilter> inter_pod_;
  std::unique_ptr<TopologySpread> spread_;  // DoNotSchedule constraints
  absl::flat_hash_map<const NodeInfo*, std::vector<const TaskInfo*>> evicted_;  // by this session
};

}  // namespace

PluginOr NewPredicatesPlugin(const Arguments& args) {
  // Volcano's switches and arguments (predicates.go, helper.go); those for
  // filters volcanic does not implement yet (volume limits and zones, DRA,
  // proportional) are accepted so existing configurations load, and
  // documented in docs/plugins.md.
  if (auto s = args.CheckKnown({"predicate.NodeAffinityEnable", "predicate.NodePortsEnable",
                                "predicate.TaintTolerationEnable", "predicate.PodAffinityEnable",
                                "predicate.NodeVolumeLimitsEnable", "predicate.VolumeZoneEnable",
                                "predicate.PodTopologySpreadEnable", "predicate.CacheEnable",
                                "predicate.ProportionalEnable", "predicate.resources",
                                "predicate.VolumeBindingEnable",
                                "predicate.DynamicResourceAllocationEnable", "volumebinding.bindTimeoutSeconds",
                                "volumebinding.weight", "volumebinding.shape",
                                "dynamicresources.filterTimeoutSeconds"},
                               {"predicate.resources."});
      !s.ok())
    return s;
  auto affinity = args.Bool("predicate.NodeAffinityEnable", true);
  auto taints = args.Bool("predicate.TaintTolerationEnable", true);
  auto ports = args.Bool("predicate.NodePortsEnable", true);
  auto pod_affinity = args.Bool("predicate.PodAffinityEnable", true);
  auto spread = args.Bool("predicate.PodTopologySpreadEnable", true);
  auto volumes = args.Bool("predicate.VolumeBindingEnable", true);
  for (const auto* s : {&affinity, &taints, &ports, &pod_affinity, &spread, &volumes})
    if (!s->ok()) return s->status();
  auto timeout = args.Int("volumebinding.bindTimeoutSeconds", 600);  // Volcano's default (helper.go)
  if (!timeout.ok()) return timeout.status();
  std::optional<int64_t> volume_bind_timeout_s;
  if (*volumes) volume_bind_timeout_s = *timeout;
  return std::make_unique<PredicatesPlugin>(*affinity, *taints, *ports, *pod_affinity, *spread, volume_bind_timeout_s);
}

}  // namespace volcanic
