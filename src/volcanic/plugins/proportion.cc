// proportion (reference §4.6, Volcano's proportion.go): each queue deserves
// a weighted share of the cluster, found by water-filling, capped by its
// capability and its demand and raised to its guarantee. Queues under their
// share go first; a queue at its share takes no more; a queue under its share
// may reclaim from queues above theirs, only as far as they stay at it.
#include "absl/container/flat_hash_map.h"
#include "volcanic/framework/session.h"
#include "volcanic/framework/tiers.h"
#include "volcanic/plugins/plugins.h"
#include "absl/strings/str_cat.h"
#include "volcanic/plugins/share.h"

namespace volcanic {
namespace {

struct QueueAttr {
  const QueueInfo* queue = nullptr;
  Resource deserved, allocated, request, inqueue, elastic, real_capability, guarantee;
  double share = 0;
  void UpdateShare() { share = DominantShare(allocated, deserved); }
};

// A queue's capability, where Volcano reads a cpu or memory of 0 as no limit.
Resource Capability(const QueueInfo& q) {
  Resource cap = q.capability;
  for (ResourceId r : {kCpu, kMemory})
    if (cap.Get(r) <= 0) cap.Set(r, Resource::kInfinite);
  return cap;
}

// `pods` is left out of the reclaim checks: Volcano's requests do not carry it.
// Some dimension of `allocated` is above `deserved`.
bool Above(const Resource& allocated, const Resource& deserved) {
  for (int i = 0; i < allocated.Span(deserved); ++i)
    if (i != kPods && allocated.Get(i) > deserved.Get(i)) return true;
  return false;
}

class ProportionPlugin : public Plugin {
 public:
  void OnSessionOpen(PluginHandle& h) override {
    Session& ssn = h.session();
    BuildAttrs(ssn);
    WaterFill(ssn.total_resource());
    for (const auto& [name, a] : attrs_) ssn.SetDeserved(name, a.deserved);
    h.AddQueueOrderFn([this](const QueueInfo& l, const QueueInfo& r) {
      if (l.priority != r.priority) return l.priority > r.priority ? -1 : 1;
      double ls = Share(l), rs = Share(r);
      if (ls == rs) return 0;
      return ls < rs ? -1 : 1;
    });
    h.AddOverusedFn([this](const QueueInfo& q) {
      QueueAttr* a = Find(q.name);
      return a && a->deserved.LessEqual(a->allocated);
    });
    // An Open queue may take the task while it stays within deserved, by
    // allocating (Allocatable) or by reclaiming (Preemptive).
    auto within_deserved = [this](const QueueInfo& q, const TaskInfo& t) {
      QueueAttr* a = Find(q.name);
      return a && q.IsOpen() && FitsOnRequested(a->allocated + t.resreq, a->deserved, t.resreq);
    };
    h.AddAllocatableFn(within_deserved);
    h.AddPreemptiveFn(within_deserved);
    h.AddReclaimableFn([this](const TaskInfo&, const std::vector<TaskInfo*>& candidates) {
      absl::btree_map<std::string, Resource> left;  // victim queues' allocations as victims go
      std::vector<TaskInfo*> victims;
      for (TaskInfo* t : candidates) {
        QueueAttr* a = Find(t->job->queue);
        if (!a) continue;
        auto [it, created] = left.try_emplace(t->job->queue, a->allocated);
        Resource& allocated = it->second;
        // A victim while its queue is still above deserved in some
        // dimension, counting the victims before it (so the last one may
        // take the queue below by less than its own request).
        if (Above(allocated, a->deserved)) {
          allocated = allocated.SubFloorZero(t->resreq);
          victims.push_back(t);
        }
      }
      return std::optional<std::vector<TaskInfo*>>(std::move(victims));
    });
    h.AddJobEnqueueableFn([this, &ssn](const JobInfo& job) {
      const QueueInfo* q = ssn.FindQueue(job.queue);
      if (!q || !q->IsOpen()) {
        ssn.Explain(job, q ? absl::StrCat("queue ", q->name, " is ", q->state) : "queue " + job.queue + " does not exist");
        return kReject;
      }
      QueueAttr* a = Find(job.queue);
      if (!a || !job.min_resources) return kPermit;
      Resource taken = a->allocated + a->inqueue - a->elastic;
      ResourceId short_of = ShortOnRequested(*job.min_resources + taken, a->real_capability, *job.min_resources);
      if (short_of < 0) return kPermit;
      ssn.Explain(job, QuotaShortfall(absl::StrCat("proportion: queue ", q->name, " capability"), short_of,
                                      *job.min_resources, taken, a->real_capability));
      return kReject;
    });
    h.AddJobEnqueuedFn([this](const JobInfo& job) {
      if (QueueAttr* a = Find(job.queue); a && job.min_resources) a->inqueue += job.DeductGated(*job.min_resources);
    });
    h.AddEventHandler([this](const TaskInfo& t) { Update(t, +1); }, [this](const TaskInfo& t) { Update(t, -1); });
  }

  // Volcano's proportion metrics, as they stand at the session's end: for a
  // queue with jobs its allocated, request, inqueue, weight, deserved, share
  // and whether it is overused; a queue without jobs allocates and requests
  // nothing (Volcano's proportion.go, UpdateQueue* calls).
  void OnSessionClose(Session& ssn) override {
    SessionMetrics* m = ssn.metrics();
    if (!m) return;
    for (const auto& [name, q] : ssn.queues()) {
      QueueMetrics& qm = m->queues[name];
      const QueueAttr* a = Find(name);
      qm.allocated = a ? a->allocated : Resource();
      qm.request = a ? a->request : Resource();
      if (!a) continue;
      qm.inqueue = a->inqueue;
      qm.weight = a->queue->weight;
      qm.deserved = a->deserved;
      qm.share = a->share;
      qm.overused = a->deserved.LessEqual(a->allocated);
    }
  }

 private:
  QueueAttr* Find(const std::string& queue) {
    auto it = attrs_.find(queue);
    return it == attrs_.end() ? nullptr : &it->second;
  }
  double Share(const QueueInfo& q) {
    QueueAttr* a = Find(q.name);
    return a ? a->share : 0;
  }

  // Each queue with schedulable jobs, from the sums the cache keeps over them
  // (queue_sums.h: allocated, request, inqueue and elastic, as Volcano's
  // proportion sums them per job at open).
  void BuildAttrs(Session& ssn) {
    Resource total_guarantee;
    for (const auto& [name, q] : ssn.queues()) total_guarantee += q->guarantee;
    Resource unguaranteed = ssn.total_resource().SubFloorZero(total_guarantee);
    for (const auto& [name, sums] : ssn.cache().queue_sums()) {
      const QueueInfo* q = ssn.FindQueue(name);
      if (!q) continue;
      QueueAttr& a = attrs_[name];
      a.queue = q;
      a.guarantee = q->guarantee;
      a.real_capability = (unguaranteed + q->guarantee).Min(Capability(*q));
      a.allocated = sums.allocated;
      a.request = sums.request;
      a.inqueue = sums.inqueue;
      a.elastic = sums.elastic;
    }
  }

  // Deserved = iterative weighted water-filling of the cluster total.
  void WaterFill(const Resource& total) {
    Resource remaining = total;
    absl::flat_hash_map<std::string, bool> met;
    while (true) {
      int64_t total_weight = 0;
      for (const auto& [name, a] : attrs_)
        if (!met[name]) total_weight += a.queue->weight;
      if (total_weight == 0) break;
      Resource before = remaining, increased, decreased;
      for (auto& [name, a] : attrs_) {
        if (met[name]) continue;
        Resource old = a.deserved;
        // Rounded up, so a queue that alone still asks for a resource ends
        // up deserving all of it (Volcano's floats stop a hair short).
        Resource portion;
        for (int i = 0; i < remaining.Size(); ++i) {
          int64_t r = std::max<int64_t>(remaining.Get(i), 0);
          portion.Set(i, static_cast<int64_t>((static_cast<__int128>(r) * a.queue->weight + total_weight - 1) /
                                              total_weight));
        }
        a.deserved = (a.deserved + portion).Min(a.real_capability).Min(a.request);
        if (a.request.LessEqual(a.deserved) || a.deserved == old) met[name] = true;
        a.deserved = a.deserved.Max(a.guarantee);
        a.UpdateShare();
        increased += a.deserved.SubFloorZero(old);
        decreased += old.SubFloorZero(a.deserved);
      }
      remaining = remaining - increased + decreased;
      if (remaining.IsEmpty() || remaining == before) break;
    }
  }

  void Update(const TaskInfo& t, int sign) {
    if (!t.job) return;
    QueueAttr* a = Find(t.job->queue);
    if (!a) return;
    if (sign > 0) a->allocated += t.resreq; else a->allocated -= t.resreq;
    a->UpdateShare();
  }

  absl::btree_map<std::string, QueueAttr> attrs_;  // by name: deterministic
};

}  // namespace

PluginOr NewProportionPlugin(const Arguments& args) {
  if (auto s = args.CheckKnown({}); !s.ok()) return s;
  return std::make_unique<ProportionPlugin>();
}

}  // namespace volcanic
