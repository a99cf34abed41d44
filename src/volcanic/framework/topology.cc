#include "volcanic/framework/topology.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace volcanic {
namespace {

constexpr uint16_t kReadyMask = kAllocatedMask | Mask(TaskStatus::kSucceeded);

// The values of the policy's matchLabelKeys on the pod, or nullopt when the
// policy does not take it (Volcano's getSubJobMatchValues: its selector must
// match and every key have a value; a policy without keys takes no pod).
std::optional<std::vector<std::string>> MatchValues(const SubGroupPolicy& p, const TaskInfo& t) {
  if (p.match_label_keys.empty()) return std::nullopt;
  if (p.selector && !p.selector->Matches(t.labels)) return std::nullopt;
  std::vector<std::string> values;
  for (const std::string& key : p.match_label_keys) {
    auto it = t.labels.find(key);
    if (it == t.labels.end() || it->second.empty()) return std::nullopt;
    values.push_back(it->second);
  }
  return values;
}

}  // namespace

int TopologyUnit::Count(uint16_t mask) const {
  int n = 0;
  for (const TaskInfo* t : tasks) n += In(t->status, mask);
  return n;
}

bool TopologyUnit::Ready() const {
  int best_effort = 0;
  for (const TaskInfo* t : tasks) best_effort += t->status == TaskStatus::kPending && t->best_effort;
  return Count(kReadyMask) + best_effort >= min_available;
}

bool TopologyUnit::Pipelined() const {
  int best_effort = 0;
  for (const TaskInfo* t : tasks) best_effort += t->status == TaskStatus::kPending && t->best_effort;
  return Count(kReadyMask | Mask(TaskStatus::kPipelined)) + best_effort >= min_available;
}

bool JobGangs::hard() const {
  if (whole.limit.hard) return true;
  for (const TopologyUnit& g : gangs)
    if (g.limit.hard) return true;
  return false;
}

TopologyLimit SessionTopology::Limit(const std::optional<NetworkTopology>& nt,
                                     const std::optional<TopologyLimit>& parent) const {
  if (!nt) return {};
  std::optional<int32_t> tier = nt->highest_tier;
  if (!tier && !nt->highest_tier_name.empty()) tier = tree_.TierNamed(nt->highest_tier_name);
  if (nt->mode == "soft") {
    if (parent && parent->hard) return {true, parent->highest_tier};
    return {true, tree_.at(tree_.top()).tier};
  }
  if (nt->mode == "hard" && tier) return {true, *tier};
  return {};
}

JobGangs& SessionTopology::GangsOf(const JobInfo& job) {
  auto& slot = gangs_[&job];
  if (!slot) slot = std::make_unique<JobGangs>(Build(job));
  return *slot;
}

JobGangs SessionTopology::Build(const JobInfo& job) const {
  JobGangs g;
  g.policies = !job.sub_group_policies.empty();
  TopologyUnit& whole = g.whole;
  whole.job = &job;
  whole.id = job.key;
  whole.min_available = job.min_available;
  whole.with_topology = job.network_topology.has_value();
  whole.limit = Limit(job.network_topology, std::nullopt);
  if (job.min_resources) whole.min_resource = *job.min_resources;
  for (const SubGroupPolicy& p : job.sub_group_policies)
    if (p.min_sub_groups > 0) g.min_gangs[p.name] = p.min_sub_groups;
  absl::btree_map<std::string, TopologyUnit> by_id;
  for (const auto& [key, t] : job.tasks) {
    whole.tasks.push_back(t);
    const SubGroupPolicy* policy = nullptr;
    std::optional<std::vector<std::string>> values;
    for (const SubGroupPolicy& p : job.sub_group_policies)
      if ((values = MatchValues(p, *t))) {
        policy = &p;
        break;
      }
    std::string id = policy ? absl::StrCat(job.key, "/", policy->name, "-", absl::StrJoin(*values, "-")) : job.key;
    auto [it, added] = by_id.try_emplace(id);
    TopologyUnit& u = it->second;
    if (added) {
      u.job = &job;
      u.id = id;
      const std::optional<NetworkTopology>& nt = policy ? policy->topology : job.network_topology;
      u.with_topology = nt.has_value();
      u.limit = Limit(nt, whole.limit);
      if (policy) {
        u.group = policy->name;
        u.min_available = policy->sub_group_size;
        if (!absl::SimpleAtoi(values->front(), &u.match_index)) u.match_index = 0;
      } else {
        u.min_available = g.policies ? 1 : job.min_available;
      }
    }
    u.tasks.push_back(t);
    if (t->status == TaskStatus::kPending) u.min_resource += t->resreq;
  }
  for (auto& [id, u] : by_id) {
    for (const TaskInfo* t : u.tasks) g.gang_of[t] = static_cast<int>(g.gangs.size());
    if (u.with_topology) {
      std::vector<TaskInfo*> placed;
      for (TaskInfo* t : u.tasks)
        if (In(t->status, kAllocatedMask)) placed.push_back(t);
      u.allocated = Recover(placed);
    }
    whole.allocated = tree_.Lca(whole.allocated, u.allocated);
    g.gangs.push_back(std::move(u));
  }
  return g;
}

int SessionTopology::Recover(const std::vector<TaskInfo*>& placed) const {
  int lca = HyperNodeTree::kNone;
  for (const TaskInfo* t : placed) {
    if (!t->node || t->node->index < 0) return HyperNodeTree::kNone;
    lca = tree_.Lca(lca, tree_.Lowest(t->node->index));
  }
  return lca;
}

int SessionTopology::Placing(const TaskInfo& t) const {
  auto it = placing_.find(&t);
  return it == placing_.end() ? HyperNodeTree::kNone : it->second;
}

}  // namespace volcanic
