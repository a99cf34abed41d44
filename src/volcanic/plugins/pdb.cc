// pdb (Volcano's pkg/scheduler/plugins/pdb): preempt and reclaim take no
// victim that would break a PodDisruptionBudget. Each call starts from every
// budget's status.disruptionsAllowed and walks the candidates in the order
// given; a candidate covered by a budget (same namespace, matched by a
// non-empty selector, not yet in its status.disruptedPods) spends one
// disruption of it, and is kept as a victim only while no budget it spends
// goes below zero. As in Volcano, a pod without labels is never a victim.
// The same filter answers the shuffle action's VictimTasks, as Volcano's
// does: with pdb and shuffle together, every Running pod that no budget
// protects is a victim.
// Cost: O(candidates x budgets of their namespaces) per call, nothing per node.
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "volcanic/framework/session.h"
#include "volcanic/plugins/plugins.h"

namespace volcanic {
namespace {

class PdbPlugin : public Plugin {
 public:
  void OnSessionOpen(PluginHandle& h) override {
    const auto* budgets = &h.session().cache().disruption_budgets();
    auto filter = [budgets](const TaskInfo&, const std::vector<TaskInfo*>& candidates) {
      return std::optional<std::vector<TaskInfo*>>(Victims(*budgets, candidates));
    };
    h.AddPreemptableFn(filter);
    h.AddReclaimableFn(filter);
    h.AddVictimTasksFn([budgets](const std::vector<TaskInfo*>& candidates) { return Victims(*budgets, candidates); });
  }

 private:
  static std::vector<TaskInfo*> Victims(const absl::btree_map<std::string, DisruptionBudget>& budgets,
                                        const std::vector<TaskInfo*>& candidates) {
    // Disruptions left per budget, for this call only (Volcano lists
    // the budgets again at every call).
    absl::flat_hash_map<const DisruptionBudget*, int64_t> left;
    std::vector<TaskInfo*> victims;
    for (TaskInfo* t : candidates) {
      if (t->labels.empty()) continue;
      bool violated = false;
      for (auto it = budgets.lower_bound(t->ns + "/"); it != budgets.end() && it->second.ns == t->ns; ++it) {
        const DisruptionBudget& b = it->second;
        if (!b.Covers(t->ns, t->labels) || b.Disrupted(t->name)) continue;
        if (--left.try_emplace(&b, b.disruptions_allowed).first->second < 0) violated = true;
      }
      if (!violated) victims.push_back(t);
    }
    return victims;
  }
};

}  // namespace

PluginOr NewPdbPlugin(const Arguments& args) {
  if (auto s = args.CheckKnown({}); !s.ok()) return s;
  return std::make_unique<PdbPlugin>();
}

}  // namespace volcanic
