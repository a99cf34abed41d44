#include "volcanic/plugins/capacity_queues.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "volcanic/framework/session.h"
#include "volcanic/plugins/share.h"

namespace volcanic::capacity {
namespace {

constexpr const char* kRoot = "root";

// A capability as Volcano reads it: cpu or memory <= 0 and any dimension
// left out take `inherited` (the parent's capability in a hierarchy,
// unbounded otherwise); a scalar given as 0 stays 0.
Resource EffectiveCapability(const Resource& own, const Resource& inherited) {
  Resource cap = own;
  for (int i = 0; i < own.Span(inherited); ++i) {
    int64_t v = own.Get(i);
    bool left_out = v >= Resource::kInfinite || ((i == kCpu || i == kMemory) && v <= 0);
    if (left_out) cap.Set(i, inherited.Get(i));
  }
  return cap;
}

void AddUse(QueueAttr& a, const JobUse& use) {
  a.allocated += use.allocated;
  a.inqueue += use.inqueue;
  a.elastic += use.elastic;
}

}  // namespace

QueueAttr* QueueAttr::AncestorAt(int depth) const {
  int n = static_cast<int>(ancestors.size());
  if (depth <= 0 || depth > n) return nullptr;
  return ancestors[n - depth];
}

void QueueAttr::UpdateShare() {
  if (deserved.IsEmpty()) {
    share = 1;
    return;
  }
  share = 0;
  for (int i = 0; i < deserved.Size(); ++i)
    if (i != kPods && deserved.Get(i) > 0) share = std::max(share, Share(allocated.Get(i), deserved.Get(i)));
}

JobUse UseOf(const JobInfo& job) {
  JobUse use;
  use.allocated = job.allocated;
  Resource min = job.min_resources.value_or(Resource());
  // An Inqueue job keeps the part of its minimum it does not hold yet; so
  // does a Running one with at least minMember tasks allocated (Volcano's
  // guard against reserving again for a job whose driver finished).
  bool reserves = job.phase == "Inqueue" ||
                  (job.phase == "Running" && job.Count(kAllocatedMask) >= job.min_available);
  if (job.min_resources && reserves) use.inqueue = job.DeductGated(min.SubFloorZero(job.allocated));
  use.elastic = job.allocated.SubFloorZero(min);
  return use;
}

QueueAttr* QueueTree::Find(const std::string& name) {
  auto it = attrs_.find(name);
  return it == attrs_.end() ? nullptr : &it->second;
}

void QueueTree::Charge(QueueAttr& a, const Resource& r, int sign) {
  auto apply = [&](QueueAttr& x) {
    if (sign > 0) x.allocated += r; else x.allocated -= r;
    x.UpdateShare();
  };
  apply(a);
  for (QueueAttr* up : a.ancestors) apply(*up);
}

void QueueTree::BuildFlat(const Session& ssn) {
  Resource total_guarantee;
  for (const auto& [name, q] : ssn.queues()) total_guarantee += q->guarantee;
  Resource spare = ssn.total_resource().SubFloorZero(total_guarantee);
  for (const auto& [key, job] : ssn.jobs()) {
    const QueueInfo* q = ssn.FindQueue(job->queue);
    if (!q) continue;
    auto [it, created] = attrs_.try_emplace(q->name);
    QueueAttr& a = it->second;
    if (created) {
      a.queue = q;
      a.deserved = q->deserved;
      a.guarantee = q->guarantee;
      a.capability = EffectiveCapability(q->capability, Resource::Infinite());
      a.real_capability = (spare + q->guarantee).Min(a.capability);
    }
    AddUse(a, UseOf(*job));
  }
  for (auto& [name, a] : attrs_) {
    a.deserved = a.deserved.Min(a.real_capability).Max(a.guarantee);
    a.UpdateShare();
  }
}

std::string QueueTree::BuildHierarchy(const Session& ssn) {
  for (const auto& [name, q] : ssn.queues()) {
    QueueAttr& a = attrs_[name];
    a.queue = q;
    a.deserved = q->deserved;
    a.guarantee = q->guarantee;
    a.capability = q->capability;
  }
  QueueAttr* root = Find(kRoot);
  if (!root) return "there is no root queue";
  for (auto& [name, a] : attrs_) {
    if (a.root()) continue;
    const std::string& parent = a.queue->parent.empty() ? std::string(kRoot) : a.queue->parent;
    QueueAttr* p = Find(parent);
    if (!p) return absl::StrCat("the queue ", name, " has invalid parent queue ", parent);
    a.parent = p;
    p->children.push_back(&a);
  }
  for (auto& [name, a] : attrs_) {
    std::vector<QueueAttr*> chain;
    for (QueueAttr* p = a.parent; p; p = p->parent) {
      if (p == &a || chain.size() >= attrs_.size()) return absl::StrCat("cycle detected in queue hierarchy for queue ", name);
      chain.push_back(p);
    }
    a.ancestors.assign(chain.rbegin(), chain.rend());
  }
  for (const auto& [key, job] : ssn.jobs()) {
    QueueAttr* a = Find(job->queue);
    if (!a) continue;
    if (!a->leaf())
      return absl::StrCat("the queue ", a->name(), " of job ", job->key, " is not a leaf queue");
    JobUse use = UseOf(*job);
    AddUse(*a, use);
    for (QueueAttr* up : a->ancestors) AddUse(*up, use);
  }
  // The root is bounded by its own capability only, not by the cluster:
  // jobs may ask for more than the nodes have now (Volcano's choice).
  root->capability = EffectiveCapability(root->capability, Resource::Infinite());
  root->real_capability = root->capability;
  Distribute(*root);
  for (auto& [name, a] : attrs_) a.UpdateShare();
  return "";
}

// Volcano's checkHierarchicalQueue, top down: a child deserves at least its
// guarantee, inherits the capability it leaves out, and may hold what its
// parent may hold less its siblings' guarantees; the root deserves and
// guarantees what its children do. Inconsistent numbers (children
// deserving more than their parent) are used as given, as Volcano does.
void QueueTree::Distribute(QueueAttr& top) {
  std::vector<QueueAttr*> todo = {&top};
  for (size_t next = 0; next < todo.size(); ++next) {
    QueueAttr& parent = *todo[next];
    Resource total_deserved, total_guarantee;
    for (QueueAttr* c : parent.children) {
      c->deserved = c->deserved.Max(c->guarantee);
      total_deserved += c->deserved;
      total_guarantee += c->guarantee;
      c->capability = EffectiveCapability(c->capability, parent.capability);
    }
    if (parent.root()) {
      parent.guarantee = total_guarantee;
      parent.deserved = total_deserved;
    }
    for (QueueAttr* c : parent.children) {
      c->real_capability = (parent.real_capability.SubFloorZero(total_guarantee) + c->guarantee).Min(c->capability);
      todo.push_back(c);
    }
  }
}

int QueueLevel(const QueueAttr& l, const QueueAttr& r) {
  int level = 0;
  size_t n = std::min(l.ancestors.size(), r.ancestors.size());
  for (size_t i = 0; i < n; ++i) {
    if (l.ancestors[i] != r.ancestors[i]) return level;
    level = static_cast<int>(i);
  }
  return level;
}

int CompareShare(const QueueAttr* l, const QueueAttr* r) {
  if (!l || !r) return 0;
  if (l->share == r->share) {
    bool ld = !l->deserved.IsEmpty(), rd = !r->deserved.IsEmpty();
    if (ld == rd) return 0;
    return ld ? -1 : 1;
  }
  return l->share < r->share ? -1 : 1;
}

bool Intersects(const Resource& a, const Resource& b) {
  for (int i = 0; i < a.Span(b); ++i)
    if (i != kPods && a.Get(i) > 0 && b.Get(i) > 0) return true;
  return false;
}

bool WithinDeservedSomewhere(const Resource& used, const Resource& deserved, const Resource& req) {
  for (int i = 0; i < req.Size(); ++i) {
    if (i == kPods || req.Get(i) <= 0) continue;
    if (used.Get(i) == 0 && deserved.Get(i) == 0) continue;  // neither uses it: not a reason
    if (used.Get(i) <= deserved.Get(i)) return true;
  }
  return false;
}

bool AboveDeservedSomewhere(const Resource& allocated, const Resource& deserved, const Resource& req) {
  for (int i = 0; i < req.Size(); ++i)
    if (i != kPods && req.Get(i) > 0 && deserved.Get(i) > 0 && allocated.Get(i) > deserved.Get(i)) return true;
  return false;
}

bool CoversGuarantee(const Resource& left, const Resource& guarantee) {
  for (int i = 0; i < left.Span(guarantee); ++i)
    if (i != kPods && guarantee.Get(i) > left.Get(i)) return false;
  return true;
}

}  // namespace volcanic::capacity
