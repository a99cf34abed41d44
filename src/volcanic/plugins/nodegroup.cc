// nodegroup (reference §4.6): a queue's spec.affinity names the node groups
// (node label volcano.sh/nodegroup-name) its jobs may use. Required affinity
// and preferred affinity admit a group, required anti-affinity excludes it,
// preferred anti-affinity admits it again (Volcano's order of checks); the
// score is 100 for a required group, +50 for a preferred one (or, with
// `enablePreferredOrder`, 50 x (n - i) / n for the i-th of n preferred
// groups), and -1 for a group under preferred anti-affinity. A node without
// the label fits only in non-strict mode and for a queue without affinity; a
// labelled node never fits a queue without affinity. With `enableHierarchy:
// true` a queue without spec.affinity takes its nearest ancestor's.
//
// Cost: O(queues) at session open; a predicate or score is a queue lookup
// and a few set lookups. Not node-local: the answer depends on the task's
// queue, which is not part of its class.
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "volcanic/framework/session.h"
#include "volcanic/plugins/plugins.h"

namespace volcanic {
namespace {

constexpr char kName[] = "nodegroup";
constexpr char kGroupLabel[] = "volcano.sh/nodegroup-name";
constexpr double kBaseScore = 100;

// One queue's affinity as sets (Volcano's queueGroupAffinity).
struct GroupRules {
  absl::flat_hash_set<std::string> required, preferred, anti_required, anti_preferred;
  // The last position of each preferred group; its size is the n of the
  // ordered score.
  absl::flat_hash_map<std::string, int> preferred_index;

  explicit GroupRules(const QueueAffinity& a)
      : required(a.required.begin(), a.required.end()),
        preferred(a.preferred.begin(), a.preferred.end()),
        anti_required(a.anti_required.begin(), a.anti_required.end()),
        anti_preferred(a.anti_preferred.begin(), a.anti_preferred.end()) {
    for (size_t i = 0; i < a.preferred.size(); ++i) preferred_index[a.preferred[i]] = static_cast<int>(i);
  }
  bool Empty() const { return required.empty() && preferred.empty() && anti_required.empty() && anti_preferred.empty(); }
  bool Admits(const std::string& group) const {
    bool ok = required.contains(group) || preferred.contains(group);
    if (anti_required.contains(group)) ok = false;
    // As in Volcano, preferred anti-affinity admits the group again (it
    // only lowers its score).
    if (anti_preferred.contains(group)) ok = true;
    return ok;
  }
  double Score(const std::string& group, bool preferred_order) const {
    double score = required.contains(group) ? kBaseScore : 0;
    if (preferred_order) {
      if (auto it = preferred_index.find(group); it != preferred_index.end()) {
        auto n = static_cast<double>(preferred_index.size());
        score += 0.5 * kBaseScore * (n - it->second) / n;
      }
    } else if (preferred.contains(group)) {
      score += 0.5 * kBaseScore;
    }
    return anti_preferred.contains(group) ? -1 : score;
  }
};

class NodeGroupPlugin : public Plugin {
 public:
  NodeGroupPlugin(bool strict, bool preferred_order) : strict_(strict), preferred_order_(preferred_order) {}

  void OnSessionOpen(PluginHandle& h) override {
    Session& ssn = h.session();
    BuildRules(ssn, HierarchyEnabled(ssn.conf(), kName));
    h.AddNodeOrderFn([this](const TaskInfo& t, const NodeInfo& n) { return Score(t, n); });
    h.AddPredicateFn([this](const TaskInfo& t, const NodeInfo& n, std::vector<std::string>* reasons) {
      const char* misfit = Misfit(t, n);
      if (!misfit) return Verdict::kFit;
      reasons->emplace_back(misfit);
      return Verdict::kUnresolvable;
    });
  }

 private:
  // Each queue's own rules, then (with hierarchy) the nearest ancestor's for
  // a queue without spec.affinity: the parent is spec.parent, else root.
  void BuildRules(const Session& ssn, bool hierarchy) {
    for (const auto& [name, q] : ssn.queues())
      if (q->affinity) own_.emplace(name, std::make_unique<GroupRules>(*q->affinity));
    for (const auto& [name, q] : ssn.queues()) {
      const GroupRules* rules = Own(name);
      absl::flat_hash_set<std::string> seen = {name};
      for (const QueueInfo* at = q; !rules && hierarchy && at->name != "root";) {
        const std::string parent = at->parent.empty() ? "root" : at->parent;
        at = ssn.FindQueue(parent);
        if (!at || !seen.insert(parent).second) break;  // a missing parent or a cycle ends the chain
        rules = Own(parent);
      }
      if (rules) by_queue_[name] = rules;
    }
  }

  const GroupRules* Own(const std::string& queue) const {
    auto it = own_.find(queue);
    return it == own_.end() ? nullptr : it->second.get();
  }

  // nullptr when the task's queue (or job) has no affinity.
  const GroupRules* RulesOf(const TaskInfo& t) const {
    if (!t.job) return nullptr;
    auto it = by_queue_.find(t.job->queue);
    return it == by_queue_.end() ? nullptr : it->second;
  }

  static const std::string* GroupOf(const NodeInfo& n) {
    auto it = n.labels.find(kGroupLabel);
    return it == n.labels.end() ? nullptr : &it->second;
  }

  double Score(const TaskInfo& t, const NodeInfo& n) const {
    const std::string* group = GroupOf(n);
    const GroupRules* rules = group ? RulesOf(t) : nullptr;
    return rules ? rules->Score(*group, preferred_order_) : 0;
  }

  // Volcano's reasons (nodegroup/errors.go); nullptr when the node fits.
  const char* Misfit(const TaskInfo& t, const NodeInfo& n) const {
    const GroupRules* rules = RulesOf(t);
    bool unset = !rules || rules->Empty();
    const std::string* group = GroupOf(n);
    if (!group) return !strict_ && unset ? nullptr : "node group label not found";
    if (unset) return "node group affinity not specified";
    return rules->Admits(*group) ? nullptr : "node does not satisfy the node group affinity";
  }

  bool strict_, preferred_order_;
  absl::flat_hash_map<std::string, std::unique_ptr<GroupRules>> own_;
  absl::flat_hash_map<std::string, const GroupRules*> by_queue_;
};

}  // namespace

PluginOr NewNodeGroupPlugin(const Arguments& args) {
  if (auto s = args.CheckKnown({"strict", "enablePreferredOrder"}); !s.ok()) return s;
  auto strict = args.Bool("strict", true);
  auto preferred_order = args.Bool("enablePreferredOrder", false);
  if (!strict.ok()) return strict.status();
  if (!preferred_order.ok()) return preferred_order.status();
  return std::make_unique<NodeGroupPlugin>(*strict, *preferred_order);
}

}  // namespace volcanic
