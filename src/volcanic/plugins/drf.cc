// drf (reference §4.6, Volcano's drf.go): jobs with the lower dominant share
// of the cluster go first, and a task may preempt tasks of jobs whose share
// after losing them stays at least the preemptor's share after gaining it.
// Shares follow allocations within the session.
//
// With `enableHierarchy: true` on the first drf of the configuration (HDRF),
// queues are also ordered by the hierarchical tree of hdrf.h, and a task may
// reclaim a task of another queue when, with the task moved, its own queue
// would still go strictly before the victim's. JobOrder and Preemptable stay
// as in flat mode, as in Volcano.
//
// Cost: O(1) at open (plus the tree, hdrf.h), a job's attributes taken on
// its first use; JobOrder O(1); an allocation O(1) flat, plus the tree's
// update with hierarchy; Reclaimable two tree updates per candidate. Bad
// input: none (the enable flag is checked by the configuration); jobs whose
// queue does not exist stay out of the tree and reclaim nothing.
#include <algorithm>
#include <cmath>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "volcanic/framework/session.h"
#include "volcanic/plugins/hdrf.h"
#include "volcanic/plugins/plugins.h"
#include "volcanic/plugins/share.h"

namespace volcanic {
namespace {

constexpr double kShareDelta = 0.000001;  // Volcano's shareDelta

class DrfPlugin : public Plugin {
 public:
  void OnSessionOpen(PluginHandle& h) override {
    Session& ssn = h.session();
    ssn_ = &ssn;
    total_ = ssn.total_resource();
    if (HierarchyEnabled(ssn.conf(), "drf")) OpenHierarchy(h);
    h.AddJobOrderFn([this](const JobInfo& l, const JobInfo& r) {
      double ls = AttrOf(&l).share, rs = AttrOf(&r).share;
      if (ls == rs) return 0;
      return ls < rs ? -1 : 1;
    });
    h.AddPreemptableFn([this](const TaskInfo& preemptor, const std::vector<TaskInfo*>& candidates) {
      double preemptor_share = DominantShare(AttrOf(preemptor.job).allocated + preemptor.resreq, total_);
      absl::flat_hash_map<const JobInfo*, Resource> left;  // victim jobs' allocations as victims go
      std::vector<TaskInfo*> victims;
      for (TaskInfo* t : candidates) {
        auto [it, created] = left.try_emplace(t->job);
        if (created) it->second = AttrOf(t->job).allocated;
        it->second = it->second.SubFloorZero(t->resreq);
        double victim_share = DominantShare(it->second, total_);
        if (preemptor_share < victim_share || std::abs(preemptor_share - victim_share) <= kShareDelta)
          victims.push_back(t);
      }
      return std::optional<std::vector<TaskInfo*>>(std::move(victims));
    });
    h.AddEventHandler([this](const TaskInfo& t) { Update(t, +1); }, [this](const TaskInfo& t) { Update(t, -1); });
  }

  // Volcano's job_share: every job's dominant share at the session's end.
  void OnSessionClose(Session& ssn) override {
    if (SessionMetrics* m = ssn.metrics())
      for (const auto& [key, job] : ssn.jobs()) m->job_shares[job->key] = AttrOf(job).share;
  }

 private:
  struct Attr {
    Resource allocated;
    double share = 0;
  };

  // A job's attributes from its allocation at open, taken when first needed:
  // most jobs of a session are never ordered, and a job's first task event
  // comes before any change of it is counted here.
  Attr& AttrOf(const JobInfo* job) {
    auto [it, created] = attrs_.try_emplace(job);
    if (created) {
      it->second.allocated = ssn_->AllocatedAtOpen(*job);
      it->second.share = DominantShare(it->second.allocated, total_);
    }
    return it->second;
  }

  void OpenHierarchy(PluginHandle& h) {
    Session& ssn = h.session();
    tree_ = std::make_unique<HdrfTree>(total_);
    // By queue name, then job key: a node's weight comes from the first
    // queue (by name) that names it. Volcano: whichever job its map gives first.
    std::vector<std::pair<const QueueInfo*, const JobInfo*>> members;
    for (const auto& [key, job] : ssn.jobs())
      if (const QueueInfo* q = ssn.FindQueue(job->queue)) members.emplace_back(q, job);
    std::stable_sort(members.begin(), members.end(),
                     [](const auto& a, const auto& b) { return a.first->name < b.first->name; });
    for (const auto& [q, job] : members) tree_->AddJob(*job, *q);
    tree_->Finish(ssn.queues());
    h.AddQueueOrderFn([this](const QueueInfo& l, const QueueInfo& r) { return tree_->Compare(l, r); });
    h.AddReclaimableFn([this, &ssn](const TaskInfo& reclaimer, const std::vector<TaskInfo*>& candidates) {
      return std::optional<std::vector<TaskInfo*>>(Reclaimable(ssn, reclaimer, candidates));
    });
  }

  // Each candidate is judged on its own against the tree with the reclaimer
  // moved in: a victim if the reclaimer's queue would then go strictly
  // before the candidate's queue without the candidate. The trial changes
  // are undone exactly (allocations are integers; nodes are recomputed from
  // them). A reclaimer outside the tree gets no victims (Volcano's Permit
  // with none).
  std::vector<TaskInfo*> Reclaimable(const Session& ssn, const TaskInfo& reclaimer,
                                     const std::vector<TaskInfo*>& candidates) {
    std::vector<TaskInfo*> victims;
    const JobInfo* ljob = reclaimer.job;
    const QueueInfo* lq = ljob ? ssn.FindQueue(ljob->queue) : nullptr;
    if (!lq || !tree_->Has(*ljob)) return victims;
    tree_->Adjust(*ljob, reclaimer.resreq, +1);
    for (TaskInfo* t : candidates) {
      const JobInfo* rjob = t->job;
      const QueueInfo* rq = rjob ? ssn.FindQueue(rjob->queue) : nullptr;
      if (!rq || !tree_->Has(*rjob)) continue;
      tree_->Adjust(*rjob, t->resreq, -1);
      int order = tree_->Compare(*lq, *rq);
      tree_->Adjust(*rjob, t->resreq, +1);
      if (order < 0) victims.push_back(t);
    }
    tree_->Adjust(*ljob, reclaimer.resreq, -1);
    return victims;
  }

  void Update(const TaskInfo& t, int sign) {
    if (!t.job) return;
    Attr& a = AttrOf(t.job);
    if (sign > 0) a.allocated += t.resreq; else a.allocated -= t.resreq;
    a.share = DominantShare(a.allocated, total_);
    if (tree_) tree_->Adjust(*t.job, t.resreq, sign);
  }

  const Session* ssn_ = nullptr;
  Resource total_;
  absl::flat_hash_map<const JobInfo*, Attr> attrs_;  // jobs met this session
  std::unique_ptr<HdrfTree> tree_;  // with enableHierarchy only
};

}  // namespace

PluginOr NewDrfPlugin(const Arguments& args) {
  if (auto s = args.CheckKnown({}); !s.ok()) return s;
  return std::make_unique<DrfPlugin>();
}

}  // namespace volcanic
