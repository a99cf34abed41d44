// capacity (reference §4.6, Volcano's capacity.go): queues share the cluster
// by the numbers they state, with no weights: a queue may hold up to its real
// capability (its capability, less what other queues' guarantees keep), is
// entitled to its deserved share, and keeps its guarantee whatever happens.
// Queues below their deserved share go first and may reclaim from queues
// above theirs, only on the dimensions those exceed and never below their
// guarantee. With `enableHierarchy: true` the queues form a tree by
// spec.parent: jobs run only in leaf queues, every check applies to a queue
// and all its ancestors, siblings are preferred as reclaim victims, and
// `ancestorReclaimLevel` (N > 0) also requires the victim's ancestors up to N
// levels (below the deepest one shared with the reclaimer) to be above their
// deserved.
//
// Registers QueueOrder, VictimQueueOrder (hierarchy only, as in Volcano),
// Reclaimable, Preemptive, Allocatable, JobEnqueueable, JobEnqueued and
// event handlers keeping allocations current within the session.
// With the SchedulingGatesQueueAdmission feature gate (FeatureGates), a pod
// that opted in to the queue-allocation gate and passed Allocatable holds
// that room in its queue until it is placed, gated or not, so that two
// gated pods cannot both be let through on the same room: a reservation
// (Volcano's queueGateReservedTasks, buildQueueReservedTasksCache,
// queueAllocatableWithReserved). As in Volcano, reservations count in the
// check of the pod's own queue only, not of its ancestors.
// Not modelled: DRA quotas (volcanic has no ResourceClaims; the two
// `capacity.DRA...` arguments are accepted and ignored), and the
// PrePredicate/Simulate* state, which feeds only Volcano's topology-aware
// preemption.
// Deterministic where Volcano is not: queues are built in name order.
// Deliberate difference: an ancestor's share follows allocations within
// the session (Volcano updates only the leaf's, so subtrees are ordered by
// their shares at session open).
// Bad input: see capacity_queues.h; a broken hierarchy makes the plugin
// refuse every allocation, enqueue and reclaim (Volcano's
// readyToSchedule=false). Arguments other than Volcano's are a ConfigError.
#include <algorithm>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "volcanic/framework/session.h"
#include "volcanic/plugins/capacity_queues.h"
#include "volcanic/plugins/plugins.h"
#include "volcanic/plugins/share.h"

namespace volcanic {
namespace {

using capacity::QueueAttr;

constexpr const char* kName = "capacity";

class CapacityPlugin : public Plugin {
 public:
  explicit CapacityPlugin(int ancestor_reclaim_level) : level_(ancestor_reclaim_level) {}

  void OnSessionOpen(PluginHandle& h) override {
    Session& ssn = h.session();
    hierarchy_ = HierarchyEnabled(ssn.conf(), kName);
    std::string broken;  // why the queue hierarchy cannot be used
    if (hierarchy_) broken = tree_.BuildHierarchy(ssn); else tree_.BuildFlat(ssn);
    ready_ = broken.empty();
    // Volcano only logs this and rejects every job; users are told why on each PodGroup.
    if (!ready_)
      for (const auto& [key, job] : ssn.jobs()) ssn.SetJobFitError(*job, "capacity: " + broken);
    if (ready_) h.AddQueueOrderFn([this](const QueueInfo& l, const QueueInfo& r) { return Order(l, r); });
    if (ready_ && hierarchy_)
      h.AddVictimQueueOrderFn([this](const QueueInfo& l, const QueueInfo& r, const QueueInfo& p) {
        return VictimOrder(l, r, p);
      });
    h.AddReclaimableFn([this, &ssn](const TaskInfo& reclaimer, const std::vector<TaskInfo*>& reclaimees) {
      return std::optional<std::vector<TaskInfo*>>(Victims(ssn, reclaimer, reclaimees));
    });
    h.AddUnifiedEvictableFn([this](const EvictionContext& ctx, const std::vector<TaskInfo*>& candidates) {
      if (ctx.kind == EvictionKind::kGangPreempt) return std::optional<std::vector<TaskInfo*>>(candidates);
      return std::optional<std::vector<TaskInfo*>>(GangReclaimVictims(candidates));
    });
    h.AddPreemptiveFn([this](const QueueInfo& q, const TaskInfo& t) { return Preemptive(q, t); });
    h.AddAllocatableFn([this](const QueueInfo& q, const TaskInfo& t) { return Allocatable(q, t); });
    h.AddJobEnqueueableFn([this, &ssn](const JobInfo& job) { return Enqueueable(ssn, job); });
    h.AddJobEnqueuedFn([this](const JobInfo& job) { Enqueued(job); });
    reserving_ = ssn.features().queue_allocation_gate;
    if (reserving_) ReserveForUngated(ssn);
    h.AddEventHandler([this](const TaskInfo& t) { Allocated(t); }, [this](const TaskInfo& t) { Deallocated(t); });
  }

  // Volcano's capacity metrics, as they stand at the session's end
  // (capacity.go: the UpdateQueue* calls of its queue building, updateShare
  // and OnSessionClose): for every queue of the hierarchy, or every queue
  // with jobs when flat, deserved, allocated, request (an inner queue's is
  // its subtree's), inqueue, capability, real capability, share, and
  // overused (share above 1); a flat queue without jobs shows its spec's
  // deserved and nothing allocated or requested. A dimension without a
  // bound is left out of the capacities.
  void OnSessionClose(Session& ssn) override {
    SessionMetrics* m = ssn.metrics();
    if (!m) return;
    const QueueSumsTable& sums = ssn.cache().queue_sums();
    for (const auto& [name, a] : tree_.attrs()) {
      QueueMetrics& qm = m->queues[name];
      qm.deserved = a.deserved;
      qm.allocated = a.allocated;
      qm.inqueue = a.inqueue;
      qm.capability = Bounded(a.capability);
      qm.real_capability = Bounded(a.real_capability);
      qm.share = a.share;
      qm.overused = a.share > 1;
      if (!qm.request) qm.request = Resource();
      auto own = sums.find(name);  // only a leaf has jobs; its requests count up the tree
      if (own == sums.end()) continue;
      *qm.request += own->second.request;
      for (const QueueAttr* up : a.ancestors) {
        std::optional<Resource>& r = m->queues[up->name()].request;
        r = r.value_or(Resource()) + own->second.request;
      }
    }
    for (const auto& [name, q] : ssn.queues()) {
      if (tree_.attrs().contains(name)) continue;
      QueueMetrics& qm = m->queues[name];
      qm.deserved = q->deserved;
      qm.allocated = qm.request = Resource();
    }
  }

 private:
  // The bounded dimensions of a capacity (an unbounded one is left out).
  static Resource Bounded(const Resource& r) {
    Resource out;
    for (int i = 0; i < r.Size(); ++i)
      if (r.Get(i) < Resource::kInfinite) out.Set(i, r.Get(i));
    return out;
  }

  QueueAttr* Find(const std::string& queue) { return tree_.Find(queue); }

  // Priority first; then, flat, the lower share. In a hierarchy leaves go
  // before inner queues, and two leaves are ordered by the shares of their
  // subtrees just below the deepest ancestor they share.
  int Order(const QueueInfo& l, const QueueInfo& r) {
    if (l.priority != r.priority) return l.priority > r.priority ? -1 : 1;
    QueueAttr *la = Find(l.name), *ra = Find(r.name);
    if (!hierarchy_ || !la || !ra) return capacity::CompareShare(la, ra);
    if (la->leaf() != ra->leaf()) return la->leaf() ? -1 : 1;
    if (!la->leaf()) return capacity::CompareShare(la, ra);
    size_t below = static_cast<size_t>(capacity::QueueLevel(*la, *ra)) + 1;
    QueueAttr* lp = below < la->ancestors.size() ? la->ancestors[below] : la;
    QueueAttr* rp = below < ra->ancestors.size() ? ra->ancestors[below] : ra;
    return capacity::CompareShare(lp, rp);
  }

  // Victims from the queue sharing the deepest ancestor with the
  // reclaimer's go first.
  int VictimOrder(const QueueInfo& l, const QueueInfo& r, const QueueInfo& p) {
    QueueAttr *la = Find(l.name), *ra = Find(r.name), *pa = Find(p.name);
    if (!la || !ra || !pa) return 0;
    int ll = capacity::QueueLevel(*la, *pa), rl = capacity::QueueLevel(*ra, *pa);
    if (ll == rl) return 0;
    return ll > rl ? -1 : 1;
  }

  // The queue (and, in a hierarchy, every ancestor) stays within its real
  // capability on the dimensions the task asks for.
  // With reservations, what other opted-in pods hold in the queue counts
  // as used, and a pod that passes holds its own room from then on.
  bool Allocatable(const QueueInfo& q, const TaskInfo& t) {
    if (!q.IsOpen() || !ready_) return false;
    QueueAttr* a = Find(q.name);
    if (!a || (hierarchy_ && !a->leaf())) return false;
    Resource used = a->allocated + t.resreq;
    if (reserving_) used += ReservedBesides(*a, t);
    if (!FitsOnRequested(used, a->real_capability, t.resreq)) return false;
    for (QueueAttr* up : a->ancestors)
      if (!FitsOnRequested(up->allocated + t.resreq, up->real_capability, t.resreq)) return false;
    if (reserving_ && t.queue_gate_opt_in) Reserve(*a, t);
    return true;
  }

  // Volcano's buildQueueReservedTasksCache: the pods whose gate an earlier
  // session lifted and that wait for a node still hold their room.
  void ReserveForUngated(const Session& ssn) {
    for (const auto& [key, job] : ssn.jobs()) {
      if (job->holding_queue_room == 0) continue;
      QueueAttr* a = Find(job->queue);
      if (!a) continue;
      for (const auto& [tk, t] : job->tasks)
        if (t->HoldsQueueRoom()) Reserve(*a, *t);
    }
  }

  void Reserve(QueueAttr& a, const TaskInfo& t) {
    if (reserved_.try_emplace(&t, &a).second) a.reserved += t.resreq;
  }

  void Unreserve(const TaskInfo& t) {
    auto it = reserved_.find(&t);
    if (it == reserved_.end()) return;
    it->second->reserved -= t.resreq;
    reserved_.erase(it);
  }

  // What the queue's reservations hold, the task's own left out (it is
  // counted as the candidate).
  Resource ReservedBesides(const QueueAttr& a, const TaskInfo& t) const {
    auto it = reserved_.find(&t);
    return it != reserved_.end() && it->second == &a ? a.reserved - t.resreq : a.reserved;
  }

  // Volcano's capacity event handlers: a placed task no longer reserves; one
  // taken back (a discarded allocation, an eviction) that opted in reserves
  // again.
  void Allocated(const TaskInfo& t) {
    Charge(t, +1);
    if (reserving_) Unreserve(t);
  }

  void Deallocated(const TaskInfo& t) {
    Charge(t, -1);
    if (!reserving_ || !t.queue_gate_opt_in || !t.job) return;
    if (QueueAttr* a = Find(t.job->queue)) Reserve(*a, t);
  }

  // Admits a job whose minimum fits, with what is allocated and admitted,
  // less what its jobs hold above their minimum, in the real capability of
  // its queue and every ancestor.
  int Enqueueable(const Session& ssn, const JobInfo& job) {
    if (!ready_) return kReject;
    QueueAttr* a = Find(job.queue);
    if (!a) return kReject;
    if (hierarchy_ && !a->leaf()) {
      ssn.Explain(job, absl::StrCat("capacity: queue ", job.queue, " is not a leaf queue"));
      return kReject;
    }
    if (!a->queue->IsOpen()) {
      ssn.Explain(job, absl::StrCat("queue ", job.queue, " is ", a->queue->state));
      return kReject;
    }
    if (!job.min_resources) return kPermit;
    const Resource& min = *job.min_resources;
    // Within the queue's real capability, and each ancestor's.
    auto fits = [&](const QueueAttr& x) {
      Resource taken = x.allocated + x.inqueue - x.elastic;
      ResourceId short_of = ShortOnRequested(min + taken, x.real_capability, min);
      if (short_of >= 0)
        ssn.Explain(job, QuotaShortfall(absl::StrCat("capacity: queue ", x.queue->name, " capability"), short_of,
                                          min, taken, x.real_capability));
      return short_of < 0;
    };
    if (!fits(*a)) return kReject;
    for (QueueAttr* up : a->ancestors)
      if (!fits(*up)) return kReject;
    return kPermit;
  }

  void Enqueued(const JobInfo& job) {
    QueueAttr* a = Find(job.queue);
    if (!a || !job.min_resources) return;
    Resource admitted = job.DeductGated(*job.min_resources);
    a->inqueue += admitted;
    for (QueueAttr* up : a->ancestors) up->inqueue += admitted;
  }

  // The queue may take from others for the task if, with it, the queue stays
  // within its real capability and is within its deserved on some dimension
  // the task asks for (or, with ancestorReclaimLevel, some non-root ancestor
  // up to that level is).
  bool Preemptive(const QueueInfo& q, const TaskInfo& t) {
    if (!ready_ || !q.IsOpen()) return false;
    QueueAttr* a = Find(q.name);
    if (!a) return false;
    Resource used = a->allocated + t.resreq;
    if (!FitsOnRequested(used, a->real_capability, t.resreq)) return false;
    if (capacity::WithinDeservedSomewhere(used, a->deserved, t.resreq)) return true;
    if (!hierarchy_) return false;
    for (int depth = 1; depth <= Levels(*a); ++depth) {
      QueueAttr* up = a->AncestorAt(depth);
      if (up->root()) continue;
      if (capacity::WithinDeservedSomewhere(up->allocated + t.resreq, up->deserved, t.resreq)) return true;
    }
    return false;
  }

  // Victims in the session's victim order; each keeps its queue's guarantee
  // and comes from a queue above its deserved on a dimension the victim uses
  // (or from a queue whose deserved names none of them).
  std::vector<TaskInfo*> Victims(const Session& ssn, const TaskInfo& reclaimer,
                                 const std::vector<TaskInfo*>& reclaimees) {
    std::vector<TaskInfo*> victims;
    QueueAttr* mine = ready_ && reclaimer.job ? Find(reclaimer.job->queue) : nullptr;
    if (!mine) return victims;
    std::vector<TaskInfo*> ordered = reclaimees;
    ssn.OrderVictims(reclaimer, &ordered);
    std::map<const QueueAttr*, Resource> left;  // queues' allocations as victims are taken
    auto left_of = [&](QueueAttr* a) -> Resource& { return left.try_emplace(a, a->allocated).first->second; };
    for (TaskInfo* t : ordered) {
      QueueAttr* a = t->job ? Find(t->job->queue) : nullptr;
      if (!a || !capacity::Intersects(t->resreq, reclaimer.resreq)) continue;
      Resource& allocated = left_of(a);
      if (!capacity::CoversGuarantee(allocated - t->resreq, a->guarantee)) continue;
      if (!QueueGives(*mine, *a, allocated, *t, reclaimer)) continue;
      std::vector<Resource*> above;  // ancestors' allocations the victim lowers
      if (!AncestorsGive(*mine, *a, *t, left_of, &above)) continue;
      allocated -= t->resreq;
      for (Resource* r : above) *r -= t->resreq;
      victims.push_back(t);
    }
    return victims;
  }

  // gangreclaim's victims (Volcano's UnifiedEvictableFn for GangReclaim), in
  // the order given: each keeps its queue's guarantee, and its queue's
  // deserved names none of its dimensions or the queue is above deserved on
  // one of them. Unlike Reclaimable, no reclaimer task and no ancestors.
  std::vector<TaskInfo*> GangReclaimVictims(const std::vector<TaskInfo*>& reclaimees) {
    std::vector<TaskInfo*> victims;
    if (!ready_) return victims;
    std::map<const QueueAttr*, Resource> left;
    for (TaskInfo* t : reclaimees) {
      QueueAttr* a = t->job ? Find(t->job->queue) : nullptr;
      if (!a) continue;
      Resource& allocated = left.try_emplace(a, a->allocated).first->second;
      if (!capacity::CoversGuarantee(allocated - t->resreq, a->guarantee)) continue;
      if (capacity::Intersects(t->resreq, a->deserved) &&
          !capacity::AboveDeservedSomewhere(allocated, a->deserved, t->resreq))
        continue;
      allocated -= t->resreq;
      victims.push_back(t);
    }
    return victims;
  }

  // The victim's own queue gives it up: the queue's deserved names none of
  // the dimensions the victim uses (unless, with ancestorReclaimLevel, the
  // two queues are under one non-root ancestor and the reclaimer's deserved
  // names none of its own either: no real contention), or the queue is above
  // its deserved on one of them.
  bool QueueGives(const QueueAttr& mine, const QueueAttr& a, const Resource& allocated, const TaskInfo& t,
                  const TaskInfo& reclaimer) const {
    if (!capacity::Intersects(t.resreq, a.deserved))
      return !(hierarchy_ && level_ > 0 && SharesAncestorWithinLevel(mine, a) &&
               !capacity::Intersects(reclaimer.resreq, mine.deserved));
    return capacity::AboveDeservedSomewhere(allocated, a.deserved, t.resreq);
  }

  // With ancestorReclaimLevel: at each depth 1..N where the victim's
  // ancestor is not the root and not the reclaimer's ancestor at that depth,
  // that ancestor must give the victim up too.
  template <typename LeftOf>
  bool AncestorsGive(const QueueAttr& mine, const QueueAttr& a, const TaskInfo& t, LeftOf& left_of,
                     std::vector<Resource*>* above) const {
    if (!hierarchy_) return true;
    for (int depth = 1; depth <= Levels(a); ++depth) {
      QueueAttr* up = a.AncestorAt(depth);
      if (up->root() || up == mine.AncestorAt(depth)) continue;
      Resource& allocated = left_of(up);
      above->push_back(&allocated);
      if (!capacity::Intersects(t.resreq, up->deserved)) continue;
      if (!capacity::AboveDeservedSomewhere(allocated, up->deserved, t.resreq)) return false;
    }
    return true;
  }

  // Volcano's sharesAnyNonRootAncestorWithinLevel.
  bool SharesAncestorWithinLevel(const QueueAttr& x, const QueueAttr& y) const {
    for (int i = 1; i <= Levels(x); ++i) {
      QueueAttr* up = x.AncestorAt(i);
      if (up->root()) continue;
      for (int j = 1; j <= Levels(y); ++j)
        if (y.AncestorAt(j) == up) return true;
    }
    return false;
  }

  // How many ancestor levels ancestorReclaimLevel covers for this queue.
  int Levels(const QueueAttr& a) const { return std::min(level_, static_cast<int>(a.ancestors.size())); }

  void Charge(const TaskInfo& t, int sign) {
    QueueAttr* a = t.job ? Find(t.job->queue) : nullptr;
    if (a) tree_.Charge(*a, t.resreq, sign);
  }

  int level_;
  bool hierarchy_ = false, ready_ = true;
  capacity::QueueTree tree_;
  bool reserving_ = false;  // FeatureGates::queue_allocation_gate
  absl::flat_hash_map<const TaskInfo*, QueueAttr*> reserved_;  // task -> the queue it holds room in
};

}  // namespace

PluginOr NewCapacityPlugin(const Arguments& args) {
  if (auto s = args.CheckKnown({"ancestorReclaimLevel", "capacity.DynamicResourceAllocationEnable",
                                "capacity.DRAConsumableCapacityEnable"});
      !s.ok())
    return s;
  for (const char* dra : {"capacity.DynamicResourceAllocationEnable", "capacity.DRAConsumableCapacityEnable"})
    if (auto v = args.Bool(dra, false); !v.ok()) return v.status();
  auto level = args.Int("ancestorReclaimLevel", 0);
  if (!level.ok()) return level.status();
  // Volcano falls back to 0 for a negative level; a level deeper than any
  // tree checks every ancestor below the root.
  int64_t clamped = std::clamp<int64_t>(*level, 0, 1 << 20);
  return std::make_unique<CapacityPlugin>(static_cast<int>(clamped));
}

}  // namespace volcanic
