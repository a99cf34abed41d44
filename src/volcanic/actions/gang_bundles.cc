#include "volcanic/actions/gang_bundles.h"

#include <algorithm>
#include <limits>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "volcanic/framework/topology.h"

namespace volcanic {
namespace {

Resource SumOf(const std::vector<TaskInfo*>& tasks) {
  Resource sum;
  for (const TaskInfo* t : tasks) sum += t->resreq;
  return sum;
}

// How many more tasks each role can lose and keep its minTaskMember (the
// gang plugin skips roles when minMember is below their sum): a role's tasks
// that are allocated, succeeded, or pending without requests.
std::map<std::string, int> RoleSurplus(const JobInfo& job) {
  std::map<std::string, int> surplus;
  int role_total = 0;
  for (const auto& [role, min] : job.min_task_member) role_total += min;
  if (job.min_available < role_total) return surplus;
  std::map<std::string, int> ready;
  for (const auto& [key, t] : job.tasks)
    if (In(t->status, kAllocatedMask | Mask(TaskStatus::kSucceeded)) ||
        (t->status == TaskStatus::kPending && t->best_effort))
      ++ready[t->role];
  for (const auto& [role, min] : job.min_task_member) surplus[role] = ready[role] - min;
  return surplus;
}

// Per sub-group policy: its ready gangs above minSubGroups; and the gangs
// already short of a pod (losing more costs the policy nothing).
struct GangSurplus {
  std::map<std::string, int> by_group;
  std::vector<bool> broken;  // by gang index
};

GangSurplus GangSurplusOf(const JobGangs& gangs) {
  GangSurplus s;
  for (const TopologyUnit& g : gangs.gangs) {
    s.broken.push_back(!g.Ready());
    if (g.Ready()) ++s.by_group[g.group];
  }
  for (const auto& [group, min] : gangs.min_gangs) s.by_group[group] -= min;
  return s;
}

double Covers(const Resource& res, const Resource& need, bool cap_at_need) {
  double score = 0;
  for (int i = 0; i < need.Size(); ++i) {
    if (i == kPods || need.Get(i) <= 0) continue;
    double v = static_cast<double>(res.Get(i));
    if (cap_at_need) v = std::min(v, static_cast<double>(need.Get(i)));
    score += v / static_cast<double>(need.Get(i));
  }
  return score;
}

double ReturnOn(const Bundle& b, const Resource& need) {
  double cost = b.whole ? Covers(b.global, need, false) : 0;
  return cost == 0 ? std::numeric_limits<double>::infinity() : Covers(b.local, need, true) / cost;
}

}  // namespace

std::vector<Bundle> MakeBundles(const JobInfo& job, std::vector<TaskInfo*> tasks, const JobGangs& gangs) {
  if (tasks.empty()) return {};
  std::sort(tasks.begin(), tasks.end(), [](const TaskInfo* a, const TaskInfo* b) {
    return a->priority != b->priority ? a->priority < b->priority : a->uid < b->uid;
  });
  int job_surplus = job.ReadyTaskNum() - job.min_available;
  // Already short of minMember: losing more breaks nothing further.
  if (job_surplus < 0) return {Bundle{false, &job, tasks, SumOf(tasks), Resource()}};
  std::map<std::string, int> roles = RoleSurplus(job);
  const bool by_gangs = !gangs.min_gangs.empty();
  GangSurplus g = by_gangs ? GangSurplusOf(gangs) : GangSurplus{};
  std::vector<TaskInfo*> safe, whole;
  for (TaskInfo* t : tasks) {
    auto role = roles.find(t->role);
    bool role_safe = role == roles.end() || role->second > 0;
    auto gang = gangs.gang_of.find(t);
    int gi = gang == gangs.gang_of.end() ? -1 : gang->second;
    bool gang_safe = !by_gangs || (gi >= 0 && (g.broken[gi] || g.by_group[gangs.gangs[gi].group] > 0));
    if (job_surplus > 0 && role_safe && gang_safe) {
      safe.push_back(t);
      --job_surplus;
      if (role != roles.end()) --role->second;
      if (by_gangs && !g.broken[gi]) {
        g.broken[gi] = true;
        --g.by_group[gangs.gangs[gi].group];
      }
    } else {
      whole.push_back(t);
    }
  }
  std::vector<Bundle> bundles;
  if (!safe.empty()) bundles.push_back({false, &job, safe, SumOf(safe), Resource()});
  if (!whole.empty()) bundles.push_back({true, &job, whole, SumOf(whole), job.total_request});
  return bundles;
}

std::vector<Bundle> KeepAllowed(const std::vector<Bundle>& bundles,
                                const absl::flat_hash_set<const TaskInfo*>& allowed) {
  std::vector<Bundle> kept;
  for (const Bundle& b : bundles) {
    std::vector<TaskInfo*> tasks;
    for (TaskInfo* t : b.tasks)
      if (allowed.contains(t)) tasks.push_back(t);
    if (tasks.empty() || (b.whole && tasks.size() != b.tasks.size())) continue;
    kept.push_back({b.whole, b.job, tasks, SumOf(tasks), b.global});
  }
  return kept;
}

std::vector<TaskInfo*> Flatten(const std::vector<Bundle>& bundles) {
  std::vector<TaskInfo*> out;
  for (const Bundle& b : bundles) out.insert(out.end(), b.tasks.begin(), b.tasks.end());
  return out;
}

void SortBundles(std::vector<Bundle>* bundles, const Resource& need, const VictimFirst& victim_first) {
  std::stable_sort(bundles->begin(), bundles->end(), [&](const Bundle& l, const Bundle& r) {
    if (l.whole != r.whole) return !l.whole;
    if (victim_first && l.job != r.job) {
      bool lr = victim_first(*l.job, *r.job), rl = victim_first(*r.job, *l.job);
      if (lr != rl) return lr;
    }
    double lroi = ReturnOn(l, need), rroi = ReturnOn(r, need);
    if (lroi != rroi) return lroi > rroi;
    if (l.job->uid != r.job->uid) return l.job->uid < r.job->uid;
    if (l.tasks.front()->uid != r.tasks.front()->uid) return l.tasks.front()->uid < r.tasks.front()->uid;
    return l.tasks.size() < r.tasks.size();
  });
}

}  // namespace volcanic
