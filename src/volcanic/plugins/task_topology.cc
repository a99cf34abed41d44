// task-topology (reference §4.6; task_topology.h for the annotations). At
// session open, each job with pending tasks and a valid topology gets its
// tasks with a topology grouped into buckets, in Volcano's order (bound
// tasks first, one bucket per node they are on; then by task order and
// affinity kind): a task joins the bucket it has the most affinity with
// (minus anti-affinity), the lightest on a tie, or a new one when every
// bucket repels it. Then:
//  - task order: tasks in buckets first; within a job, bigger buckets, then
//    older ones, then the role order; across jobs no opinion;
//  - node order: the bucket's pods already on the node, less the node's
//    anti-affine pods placed this session, plus the bucket's pending pods
//    that would still fit the node (idle + releasing) beside this one, times
//    `task-topology.weight` (1), scaled to 100 by the largest bucket; 0 where
//    the task itself does not fit.
// Differences from Volcano: where the bucket does not fit, Volcano takes its
// other pods out in map (random) order, volcanic in task key order; and the
// plugin's counts follow placements both ways (Volcano counts a placement
// but never its undoing, and counts an eviction undone as a placement).
//
// Cost: O(tasks log tasks) per job at open; a node score is O(1) unless the
// bucket does not fit the node, then O(bucket).
#include "volcanic/plugins/task_topology.h"

#include <algorithm>
#include <map>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "volcanic/api/errors.h"
#include "volcanic/framework/session.h"
#include "volcanic/plugins/plugins.h"

namespace volcanic::task_topology {
namespace {

constexpr char kTaskSpec[] = "volcano.sh/task-spec";
constexpr int kOutOfBucket = -1;
constexpr double kMaxNodeScore = 100;

// Volcano's affinityPriority: a role's strongest kind orders it.
constexpr int kSelfAntiAffinity = 4, kInterAffinity = 3, kSelfAffinity = 2, kInterAntiAffinity = 1;

// The role the plugin reads: the pod's annotation only (Volcano's getTaskName).
const std::string& TaskName(const TaskInfo& t) {
  static const std::string kNone;
  auto it = t.annotations.find(kTaskSpec);
  return it == t.annotations.end() ? kNone : it->second;
}

absl::Status CheckGroups(const JobInfo& job, const std::vector<std::vector<std::string>>& groups) {
  absl::flat_hash_set<std::string> roles;
  for (const auto& [key, t] : job.tasks) roles.insert(t->role);
  for (const auto& group : groups) {
    absl::flat_hash_set<std::string> seen;
    for (const std::string& name : group) {
      if (name.empty()) continue;
      if (!roles.contains(name))
        return absl::InvalidArgumentError(absl::StrCat("task ", name, " do not exist in job <", job.ns, "/", job.name, ">"));
      if (!seen.insert(name).second)
        return absl::InvalidArgumentError(absl::StrCat("task ", name, " is duplicate in job <", job.ns, "/", job.name, ">"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::vector<std::string>>> SplitGroups(const JobInfo& job, const std::string& text) {
  std::vector<std::vector<std::string>> groups;
  for (absl::string_view group : absl::StrSplit(text, ';')) groups.push_back(absl::StrSplit(group, ','));
  if (absl::Status s = CheckGroups(job, groups); !s.ok()) return s;
  return groups;
}

// Volcano's Bucket.CalcResReq weight: 1 millicore = 1 MiB = 1 milli-unit of
// a scalar (Volcano counts pods in units and bytes-like scalars in milli-bytes).
double RequestScore(const Resource& r) {
  double score = static_cast<double>(r.Get(kCpu)) + static_cast<double>(r.Get(kMemory)) / 1024 / 1024;
  for (ResourceId id = kMemory + 1; id < r.Size(); ++id) {
    auto v = static_cast<double>(r.Get(id));
    score += id == kPods ? v / 1000 : ResourceNames::IsBytes(id) ? v * 1000 : v;
  }
  return score;
}

struct Bucket {
  int index = 0;
  std::map<std::string, const TaskInfo*> pending;      // by task key: a fixed order to take them out
  absl::flat_hash_map<std::string, int> names;         // roles in the bucket (Volcano's taskNameSet)
  double request_score = 0;
  Resource request;
  int bound = 0;
  absl::flat_hash_map<std::string, int> nodes;         // the bucket's pods per node

  void AddRequest(const TaskInfo& t, int sign) {
    request_score += sign * RequestScore(t.resreq);
    if (sign > 0) request += t.resreq;
    else request -= t.resreq;
  }
};

class JobManager {
 public:
  // Volcano's ApplyTaskTopology.
  explicit JobManager(const TaskTopology& topo) {
    Apply(topo.affinity, self_affinity_, inter_affinity_, kSelfAffinity, kInterAffinity);
    Apply(topo.anti_affinity, self_anti_, inter_anti_, kSelfAntiAffinity, kInterAntiAffinity);
    const int n = static_cast<int>(topo.task_order.size());
    for (int i = 0; i < n; ++i) order_[topo.task_order[i]] = n - i;
  }

  // Volcano's ConstructBucket over every task of the job.
  void Build(const JobInfo& job) {
    std::vector<const TaskInfo*> tasks;
    for (const auto& [key, t] : job.tasks) {
      const std::string& name = TaskName(*t);
      if (name.empty() || !priority_.contains(name)) {
        in_bucket_[t] = kOutOfBucket;
        continue;
      }
      role_[t] = name;
      tasks.push_back(t);
    }
    std::sort(tasks.begin(), tasks.end(), [this](const TaskInfo* a, const TaskInfo* b) { return BuildsFirst(*a, *b); });
    absl::flat_hash_map<std::string, Bucket*> by_node;
    for (const TaskInfo* t : tasks) {
      Bucket* chosen = nullptr;
      int best = INT32_MIN;
      if (!t->node_name.empty()) {
        best = 0;
        auto it = by_node.find(t->node_name);
        if (it != by_node.end()) chosen = it->second;
      } else {
        for (const auto& b : buckets_) {
          int affinity = SetAffinity(role_[t], b->names, false);
          if (affinity > best || (affinity == best && chosen && b->request_score < chosen->request_score)) {
            if (affinity > best) best = affinity;
            chosen = b.get();
          }
        }
      }
      if (best < 0 || !chosen) {
        chosen = NewBucket();
        if (!t->node_name.empty()) by_node[t->node_name] = chosen;
      }
      Add(chosen, *t);
    }
  }

  Bucket* BucketOf(const TaskInfo& t) const {
    auto it = in_bucket_.find(&t);
    return it == in_bucket_.end() || it->second == kOutOfBucket ? nullptr : buckets_[it->second].get();
  }

  // >0: l's role goes first (Volcano's taskAffinityOrder).
  int AffinityOrder(const TaskInfo& l, const TaskInfo& r) const {
    const std::string& ln = RoleOf(l);
    const std::string& rn = RoleOf(r);
    if (ln == rn) return 0;
    if (int lo = Get(order_, ln), ro = Get(order_, rn); lo != ro) return lo > ro ? 1 : -1;
    if (int lp = Get(priority_, ln), rp = Get(priority_, rn); lp != rp) return lp > rp ? 1 : -1;
    return 0;
  }

  // Affinity minus anti-affinity of role `name` with the roles counted in
  // `names` (only the anti part with `only_anti`).
  int SetAffinity(const std::string& name, const absl::flat_hash_map<std::string, int>& names, bool only_anti) const {
    if (name.empty()) return 0;
    int score = 0;
    for (const auto& [other, count] : names) {
      bool same = other == name;
      if (!only_anti && (same ? self_affinity_.contains(name) : Related(inter_affinity_, name, other))) score += count;
      if (same ? self_anti_.contains(name) : Related(inter_anti_, name, other)) score -= count;
    }
    return score;
  }

  // The task was placed on `node` in this session (Volcano's TaskBound), or
  // that placement was undone.
  void Placed(const TaskInfo& t) {
    if (evicted_.erase(&t) > 0) return;  // an eviction undone: it never left our counts
    if (!placed_.emplace(&t, t.node_name).second) return;
    Count(t, t.node_name, +1);
  }
  void Released(const TaskInfo& t) {
    auto it = placed_.find(&t);
    if (it == placed_.end()) {  // evicting a pod placed before the session: kept, as Volcano does
      evicted_.insert(&t);
      return;
    }
    Count(t, it->second, -1);
    placed_.erase(it);
  }

  int max_size() const { return max_size_; }
  const absl::flat_hash_map<std::string, int>* NodeRoles(const std::string& node) const {
    auto it = node_roles_.find(node);
    return it == node_roles_.end() ? nullptr : &it->second;
  }

 private:
  using Relation = absl::flat_hash_map<std::string, absl::flat_hash_set<std::string>>;

  static int Get(const absl::flat_hash_map<std::string, int>& m, const std::string& k) {
    auto it = m.find(k);
    return it == m.end() ? 0 : it->second;
  }
  static bool Related(const Relation& r, const std::string& a, const std::string& b) {
    auto it = r.find(a);
    return it != r.end() && it->second.contains(b);
  }

  void Apply(const std::vector<std::vector<std::string>>& groups, absl::flat_hash_set<std::string>& self,
             Relation& inter, int self_kind, int inter_kind) {
    for (const auto& group : groups) {
      if (group.size() == 1) {
        self.insert(group[0]);
        Mark(group[0], self_kind);
        continue;
      }
      for (size_t i = 0; i < group.size(); ++i) {
        for (size_t j = 0; j < i; ++j) {
          inter[group[i]].insert(group[j]);
          inter[group[j]].insert(group[i]);
        }
        Mark(group[i], inter_kind);
      }
    }
  }
  void Mark(const std::string& name, int kind) {
    int& p = priority_[name];
    p = std::max(p, kind);
  }

  const std::string& RoleOf(const TaskInfo& t) const {
    static const std::string kNone;
    auto it = role_.find(&t);
    return it == role_.end() ? kNone : it->second;
  }

  // The order buckets are built in (the reverse of Volcano's TaskOrder.Less):
  // bound tasks by node name, then roles by AffinityOrder, then pod names.
  bool BuildsFirst(const TaskInfo& a, const TaskInfo& b) const {
    bool ab = !a.node_name.empty(), bb = !b.node_name.empty();
    if (ab != bb) return ab;
    if (ab && a.node_name != b.node_name) return a.node_name < b.node_name;
    if (!ab)
      if (int o = AffinityOrder(a, b); o != 0) return o > 0;
    return a.name != b.name ? a.name < b.name : a.key < b.key;
  }

  Bucket* NewBucket() {
    buckets_.push_back(std::make_unique<Bucket>());
    buckets_.back()->index = static_cast<int>(buckets_.size()) - 1;
    return buckets_.back().get();
  }

  void Add(Bucket* b, const TaskInfo& t) {
    in_bucket_[&t] = b->index;
    b->names[role_[&t]]++;
    if (!t.node_name.empty()) {
      b->nodes[t.node_name]++;
      b->bound++;
    } else {
      b->pending[t.key] = &t;
      b->AddRequest(t, +1);
    }
    max_size_ = std::max(max_size_, static_cast<int>(b->pending.size()) + b->bound);
  }

  // Volcano's TaskBound (sign +1) and its undoing (-1).
  void Count(const TaskInfo& t, const std::string& node, int sign) {
    if (const std::string& name = TaskName(t); !name.empty()) {
      int& n = node_roles_[node][name];
      n += sign;
    }
    Bucket* b = BucketOf(t);
    if (!b) return;
    b->nodes[node] += sign;
    b->bound += sign;
    if (sign > 0 && b->pending.erase(t.key) > 0) b->AddRequest(t, -1);
    if (sign < 0 && b->pending.emplace(t.key, &t).second) b->AddRequest(t, +1);
  }

  std::vector<std::unique_ptr<Bucket>> buckets_;
  absl::flat_hash_map<const TaskInfo*, int> in_bucket_;
  absl::flat_hash_map<const TaskInfo*, std::string> role_;  // tasks with a topology (Volcano's podInTask)
  absl::flat_hash_map<std::string, int> priority_, order_;
  Relation inter_affinity_, inter_anti_;
  absl::flat_hash_set<std::string> self_affinity_, self_anti_;
  int max_size_ = 0;
  absl::flat_hash_map<std::string, absl::flat_hash_map<std::string, int>> node_roles_;  // this session's placements
  absl::flat_hash_map<const TaskInfo*, std::string> placed_;  // tasks placed this session -> node
  absl::flat_hash_set<const TaskInfo*> evicted_;  // pre-session pods this session evicted
};

class TaskTopologyPlugin : public Plugin {
 public:
  explicit TaskTopologyPlugin(int64_t weight) : weight_(weight) {}

  void OnSessionOpen(PluginHandle& h) override {
    managers_.clear();
    for (const auto& [key, job] : h.session().jobs()) {
      if (job->Count(Mask(TaskStatus::kPending)) == 0) continue;
      auto topo = ReadTopology(*job);
      if (!topo.ok() || !*topo) continue;  // Volcano only logs an invalid topology
      auto manager = std::make_unique<JobManager>(**topo);
      manager->Build(*job);
      managers_[job] = std::move(manager);
    }
    h.AddTaskOrderFn([this](const TaskInfo& l, const TaskInfo& r) { return Order(l, r); });
    h.AddNodeOrderFn([this](const TaskInfo& t, const NodeInfo& n) { return Score(t, n); });
    h.AddEventHandler(
        [this](const TaskInfo& t) {
          if (JobManager* m = ManagerOf(t)) m->Placed(t);
        },
        [this](const TaskInfo& t) {
          if (JobManager* m = ManagerOf(t)) m->Released(t);
        });
    // Tasks of other jobs score 0 everywhere.
    h.SetNodeLocal([this](const TaskInfo& t) { return ManagerOf(t) == nullptr; });
  }

  void OnSessionClose(Session&) override { managers_.clear(); }

 private:
  JobManager* ManagerOf(const TaskInfo& t) const {
    auto it = managers_.find(t.job);
    return it == managers_.end() ? nullptr : it->second.get();
  }

  // Volcano's TaskOrderFn (<0: l first).
  int Order(const TaskInfo& l, const TaskInfo& r) const {
    const JobManager* lm = ManagerOf(l);
    const JobManager* rm = ManagerOf(r);
    if (!lm || !rm) return 0;
    const Bucket* lb = lm->BucketOf(l);
    const Bucket* rb = rm->BucketOf(r);
    if ((lb != nullptr) != (rb != nullptr)) return lb ? -1 : 1;
    if (l.job != r.job || !lb) return 0;
    if (lb->pending.size() != rb->pending.size()) return lb->pending.size() > rb->pending.size() ? -1 : 1;
    if (lb->index == rb->index) return -lm->AffinityOrder(l, r);
    return lb->index < rb->index ? -1 : 1;
  }

  double Score(const TaskInfo& t, const NodeInfo& n) const {
    const JobManager* m = ManagerOf(t);
    const Bucket* b = m ? m->BucketOf(t) : nullptr;
    if (!b) return 0;
    Resource room = n.idle + n.releasing;
    if (!t.resreq.LessEqual(room)) return 0;  // the task itself never fits
    auto it = b->nodes.find(n.name);
    int score = it == b->nodes.end() ? 0 : it->second;
    if (const auto* roles = m->NodeRoles(n.name))
      score += std::min(0, m->SetAffinity(TaskName(t), *roles, true));
    score += static_cast<int>(b->pending.size());
    if (!b->request.LessEqual(room)) {
      // Take the bucket's other pods out until the rest fits.
      Resource remains = b->request;
      for (const auto& [key, other] : b->pending) {
        if (other == &t) continue;
        remains -= other->resreq;
        --score;
        if (remains.LessEqual(room)) break;
      }
    }
    double out = static_cast<double>(score) * static_cast<double>(weight_);
    if (m->max_size() != 0) out = out * kMaxNodeScore / m->max_size();
    return out;
  }

  int64_t weight_;
  absl::flat_hash_map<const JobInfo*, std::unique_ptr<JobManager>> managers_;
};

}  // namespace

absl::StatusOr<std::optional<TaskTopology>> ReadTopology(const JobInfo& job) {
  auto affinity = job.annotations.find(kAffinityAnnotation);
  auto anti = job.annotations.find(kAntiAffinityAnnotation);
  auto order = job.annotations.find(kTaskOrderAnnotation);
  const auto none = job.annotations.end();
  if (affinity == none && anti == none && order == none) return std::nullopt;
  TaskTopology topo;
  if (affinity != none) {
    auto groups = SplitGroups(job, affinity->second);
    if (!groups.ok()) return groups.status();
    topo.affinity = *std::move(groups);
  }
  if (anti != none) {
    auto groups = SplitGroups(job, anti->second);
    if (!groups.ok()) return groups.status();
    topo.anti_affinity = *std::move(groups);
  }
  if (order != none) {
    topo.task_order = absl::StrSplit(order->second, ',');
    if (absl::Status s = CheckGroups(job, {topo.task_order}); !s.ok()) return s;
  }
  return topo;
}

}  // namespace volcanic::task_topology

namespace volcanic {

PluginOr NewTaskTopologyPlugin(const Arguments& args) {
  if (auto s = args.CheckKnown({"task-topology.weight"}); !s.ok()) return s;
  auto weight = args.Int("task-topology.weight", 1);
  if (!weight.ok()) return weight.status();
  return std::make_unique<task_topology::TaskTopologyPlugin>(*weight);
}

}  // namespace volcanic
