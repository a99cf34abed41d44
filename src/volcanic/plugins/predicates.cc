// predicates (reference §4.6, research of predicates.go): the kube-scheduler
// filters Volcano wraps, in Volcano's order and with kube-scheduler's reason
// strings: pod count, NodeUnschedulable, NodeAffinity, TaintToleration (the
// first of these three to fail ends the check), NodePorts, InterPodAffinity.
// All but InterPodAffinity depend only on the pod's class and the node, so
// they are node-local; a pod that pod affinity concerns is searched in full.
#include "absl/strings/str_cat.h"
#include "volcanic/framework/session.h"
#include "volcanic/plugins/plugins.h"
#include "volcanic/plugins/pod_affinity.h"

namespace volcanic {
namespace {

bool PortsConflict(const HostPort& a, const HostPort& b) {
  if (a.port != b.port || a.protocol != b.protocol) return false;
  return a.host_ip.empty() || b.host_ip.empty() || a.host_ip == b.host_ip;
}

class PredicatesPlugin : public Plugin {
 public:
  PredicatesPlugin(bool affinity, bool taints, bool ports, bool pod_affinity)
      : affinity_(affinity), taints_(taints), ports_(ports), pod_affinity_(pod_affinity) {}

  void OnSessionOpen(Session& ssn) override {
    if (pod_affinity_) inter_pod_ = std::make_unique<PodAffinityFilter>(ssn);
    ssn.AddPredicateFn(
        "predicates",
        [this](const TaskInfo& t, const NodeInfo& n, std::vector<std::string>* reasons) {
          return Check(t, n, reasons);
        },
        [this](const TaskInfo& t) { return !inter_pod_ || !inter_pod_->Concerns(t); });
  }

 private:
  bool Check(const TaskInfo& t, const NodeInfo& n, std::vector<std::string>* reasons) {
    size_t before = reasons->size();
    if (n.max_pods <= n.pod_count) reasons->push_back("node(s) pod number exceeded");
    const Placement& p = *t.placement;
    static const Taint kUnschedulable{"node.kubernetes.io/unschedulable", "", "NoSchedule"};
    if (n.unschedulable && std::none_of(p.tolerations.begin(), p.tolerations.end(),
                                        [](const Toleration& tol) { return Tolerates(tol, kUnschedulable); })) {
      reasons->push_back("node(s) were unschedulable");
      return false;
    }
    if (affinity_ && !p.MatchesNodeSelectorAndAffinity(n.name, n.labels)) {
      reasons->push_back("node(s) didn't match Pod's node affinity/selector");
      return false;
    }
    if (taints_) {
      if (const Taint* taint = p.FirstUntoleratedTaint(n.taints)) {
        reasons->push_back(absl::StrCat("node(s) had untolerated taint {", taint->key, ": ", taint->value, "}"));
        return false;
      }
    }
    if (ports_ && !p.host_ports.empty()) {
      for (const auto& want : p.host_ports)
        for (const auto& used : n.used_ports)
          if (PortsConflict(want, used)) {
            reasons->push_back("node(s) didn't have free ports for the requested pod ports");
            return false;
          }
    }
    if (inter_pod_) {
      if (const char* reason = inter_pod_->Check(t, n)) {
        reasons->push_back(reason);
        return false;
      }
    }
    return reasons->size() == before;
  }

  bool affinity_, taints_, ports_, pod_affinity_;
  std::unique_ptr<PodAffinityFilter> inter_pod_;
};

}  // namespace

PluginOr NewPredicatesPlugin(const Arguments& args) {
  // Volcano's switches; those for filters volcanic does not implement yet
  // (volumes, topology spread, DRA, proportional) are accepted
  // so existing configurations load, and documented in docs/plugins.md.
  if (auto s = args.CheckKnown({"predicate.NodeAffinityEnable", "predicate.NodePortsEnable",
                                "predicate.TaintTolerationEnable", "predicate.PodAffinityEnable",
                                "predicate.NodeVolumeLimitsEnable", "predicate.VolumeZoneEnable",
                                "predicate.PodTopologySpreadEnable", "predicate.CacheEnable",
                                "predicate.ProportionalEnable", "predicate.resources",
                                "predicate.VolumeBindingEnable",
                                "predicate.DynamicResourceAllocationEnable"},
                               {"predicate.resources."});
      !s.ok())
    return s;
  auto affinity = args.Bool("predicate.NodeAffinityEnable", true);
  auto taints = args.Bool("predicate.TaintTolerationEnable", true);
  auto ports = args.Bool("predicate.NodePortsEnable", true);
  auto pod_affinity = args.Bool("predicate.PodAffinityEnable", true);
  for (const auto* s : {&affinity, &taints, &ports, &pod_affinity})
    if (!s->ok()) return s->status();
  return std::make_unique<PredicatesPlugin>(*affinity, *taints, *ports, *pod_affinity);
}

}  // namespace volcanic
