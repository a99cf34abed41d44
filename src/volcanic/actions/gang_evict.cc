// gangpreempt and gangreclaim (Volcano v1.15 pkg/scheduler/actions/
// gangpreempt, gangreclaim and utils/): a starving job takes room for its
// gangs as a whole, victims chosen per job.
//
// Jobs that are not pending, valid, with a queue: queues in QueueOrder
// (gangreclaim skips overused ones), their starving jobs in JobOrder, each
// once. A job's demand is, when it is ready, the pending tasks of its first
// gang in worksheet order (allocate's: the gangs its policies' minSubGroups
// need first, then SubJobOrder), else all its gangs' pending tasks. Its
// candidate domains are the HyperNodes of its eviction gradient
// (HyperNodeGradient with the evict purpose, flattened, at most
// `maxDomains`), or the whole cluster for a job without a hard limit. In each
// domain the candidates are per job (gang_bundles.h):
//  - gangpreempt: Bound or Running preemptable tasks of lower-priority jobs of
//    the same queue; bundles ordered whole after safe, then victim jobs in
//    reverse JobOrder, then by what they return for what they cost;
//  - gangreclaim: Running preemptable tasks of other, reclaimable queues, the
//    job's queue being Preemptive for its whole demand; bundles ordered by
//    VictimQueueOrder instead;
// a job whose PodGroup says volcano.sh/preemptable decides for its tasks,
// else they may be taken; the plugins' UnifiedEvictable answer may drop
// tasks. Bundles are added one by one while the domain's idle and releasing
// room and theirs fall short of the demand; once they do not, the placement
// is simulated: the victims are evicted, and each gang's pending tasks are
// pipelined (on the best-scored node where they fit idle, else where they fit
// once releasing room is freed), within the domain or, with a hard limit,
// the first HyperNode of the gang's eviction gradient that takes it, until
// the job is pipelined. Only a simulation that pipelines the job keeps its
// evictions; the job's statement is committed if it is then pipelined.
//
// Not modelled: the nominated HyperNode that Volcano's allocate tries first
// for such a job later in the same session (it lives in the session's copy
// of the job); volcanic's allocate searches as usual.
#include <set>

#include "absl/container/btree_map.h"
#include "volcanic/actions/actions.h"
#include "volcanic/actions/allocate_topology.h"
#include "volcanic/actions/gang_bundles.h"
#include "volcanic/framework/heap.h"
#include "volcanic/api/errors.h"
#include "volcanic/cache/cache.h"

namespace volcanic {
namespace {

constexpr int kDefaultMaxDomains = 8;

struct GangEvictOptions {
  EvictionKind kind;
  int max_domains = kDefaultMaxDomains;
  bool allow_whole = true;
};

// The best node of `nodes` for the task once victims are gone: among those
// it fits idle, else among those it fits after releasing room is freed, the
// best score (ties: the first). nullptr if none.
NodeInfo* SimulatedNode(Session& ssn, const TaskInfo& task, const std::vector<NodeInfo*>& nodes) {
  std::vector<NodeInfo*> idle, future;
  ResourceId short_of;
  for (NodeInfo* n : nodes) {
    if (!n->FitsFutureIdle(task.resreq, &short_of) || !ssn.PredicateForPreempt(task, *n)) continue;
    (task.resreq.LessEqual(n->idle) ? idle : future).push_back(n);
  }
  for (const std::vector<NodeInfo*>* group : {&idle, &future}) {
    if (group->size() == 1) return group->front();
    if (group->empty()) continue;
    std::vector<double> scores;
    ssn.NodeScores(task, *group, &scores);
    size_t best = 0;
    for (size_t i = 1; i < scores.size(); ++i)
      if (scores[i] > scores[best]) best = i;
    return (*group)[best];
  }
  return nullptr;
}

// Volcano's runSimulateTrialAtHyperNode: the gang's tasks pipelined within
// `hypernode`; the statement (applied) if the gang is then ready or pipelined.
std::optional<Statement> SimulateGangAt(Session& ssn, const QueueInfo& q, JobInfo* job, const TopologyUnit& gang,
                                        TaskList tasks, int hypernode) {
  std::vector<NodeInfo*> nodes = NodesOf(ssn, hypernode);
  if (nodes.empty()) return std::nullopt;
  Statement trial(ssn);
  while (!tasks.Empty()) {
    TaskInfo* task = tasks.Pop();
    NodeInfo* node = nullptr;
    if (ssn.Allocatable(q, *task) && ssn.PrePredicate(*task).ok()) node = SimulatedNode(ssn, *task, nodes);
    // No node, or a plugin refused it there.
    if (!node || !trial.Pipeline(task, node).ok()) {
      trial.Discard();
      return std::nullopt;
    }
  }
  if (!trial.empty() && (ssn.SubJobReady(*job, gang) || ssn.SubJobPipelined(*job, gang))) return trial;
  trial.Discard();
  return std::nullopt;
}

// The gangs of the worksheet in the order allocate takes them.
std::vector<int> GangOrder(Session& ssn, const Worksheet& ws, const JobGangs& g) {
  std::vector<int> order;
  for (const auto& [gi, tasks] : ws.tasks)
    if (!tasks.Empty()) order.push_back(gi);
  SortByOrder(order, [&](int l, int r) {
    bool lr = ws.required.contains(l), rr = ws.required.contains(r);
    if (lr != rr) return lr;
    return ssn.SubJobOrder(g.gangs[l], g.gangs[r]);
  });
  return order;
}

class GangEvictAction : public Action {
 public:
  explicit GangEvictAction(GangEvictOptions opts) : opts_(opts) {}

  void Execute(Session& ssn) override {
    absl::btree_map<std::string, std::vector<JobInfo*>> starving;  // by queue
    std::vector<const QueueInfo*> queues;
    for (const auto& [key, job] : ssn.jobs()) {
      if (job->IsPending() || ssn.JobInvalid(*job)) continue;
      const QueueInfo* q = ssn.FindQueue(job->queue);
      if (!q) continue;
      auto [it, created] = starving.try_emplace(q->name);
      if (created) queues.push_back(q);
      if (ssn.JobStarving(*job)) it->second.push_back(job);
    }
    SortByOrder(queues, [&](auto a, auto b) { return ssn.QueueOrder(*a, *b); });
    for (const QueueInfo* q : queues) {
      if (reclaiming() && ssn.Overused(*q)) continue;
      OrderedHeap<JobInfo*> jobs([&](JobInfo* a, JobInfo* b) { return ssn.JobOrder(*a, *b); });
      for (JobInfo* job : starving[q->name]) jobs.Push(job);
      while (!jobs.Empty()) {
        JobInfo* job = jobs.Pop();
        Statement stmt(ssn);
        EvictForJob(ssn, stmt, *q, job);
        if (ssn.JobPipelined(*job)) {
          stmt.Commit();
        } else {
          stmt.Discard();
        }
      }
    }
  }

 private:
  bool reclaiming() const { return opts_.kind == EvictionKind::kGangReclaim; }

  void EvictForJob(Session& ssn, Statement& stmt, const QueueInfo& q, JobInfo* job) {
    JobGangs& gangs = ssn.topology().GangsOf(*job);
    Worksheet ws = WorksheetOf(ssn, *job, gangs);
    std::vector<TaskInfo*> demand = Demand(ssn, *job, ws, gangs);
    if (demand.empty() || (reclaiming() && !PreemptiveFor(ssn, q, demand))) return;
    Resource need;
    for (const TaskInfo* t : demand) need += t->resreq;
    for (int domain : Domains(ssn, gangs)) {
      std::vector<NodeInfo*> nodes = NodesOf(ssn, domain);
      if (nodes.empty()) continue;
      Resource room;
      for (const NodeInfo* n : nodes) room += n->idle + n->releasing;
      std::vector<TaskInfo*> victims;
      for (const Bundle& b : DomainBundles(ssn, q, *job, need, domain, nodes)) {
        victims.insert(victims.end(), b.tasks.begin(), b.tasks.end());
        for (const TaskInfo* v : b.tasks) room += v->resreq;
        if (!need.LessEqual(room)) continue;
        if (std::optional<Statement> plan = Simulate(ssn, q, job, ws, gangs, domain, victims)) {
          stmt.Merge(*plan);
          return;
        }
      }
    }
  }

  // Volcano's CollectPendingTasksForGangEviction.
  static std::vector<TaskInfo*> Demand(Session& ssn, const JobInfo& job, const Worksheet& ws, const JobGangs& g) {
    std::vector<TaskInfo*> demand;
    for (int gi : GangOrder(ssn, ws, g)) {
      const TaskList& list = ws.tasks.at(gi);
      demand.insert(demand.end(), list.tasks.begin() + static_cast<std::ptrdiff_t>(list.next), list.tasks.end());
      if (ssn.JobReady(job)) break;
    }
    return demand;
  }

  // The queue may reclaim for the whole demand: Preemptive asked once, for
  // the first task carrying the demand's sum (Volcano passes the list).
  static bool PreemptiveFor(Session& ssn, const QueueInfo& q, const std::vector<TaskInfo*>& demand) {
    TaskInfo all = *demand.front();
    all.resreq = Resource();
    for (const TaskInfo* t : demand) all.resreq += t->resreq;
    return ssn.Preemptive(q, all);
  }

  // Volcano's GetCandidateDomains.
  std::vector<int> Domains(Session& ssn, const JobGangs& gangs) const {
    int top = ssn.topology().tree().top();
    std::vector<int> domains;
    std::set<int> seen;
    for (const std::vector<int>& gradient : ssn.HyperNodeGradient(gangs.whole, top, SearchPurpose::kEvict))
      for (int hn : gradient)
        if (static_cast<int>(domains.size()) < opts_.max_domains && seen.insert(hn).second) domains.push_back(hn);
    if (domains.empty() && !gangs.hard()) domains.push_back(top);
    return domains;
  }

  bool Candidate(Session& ssn, const JobInfo& job, const TaskInfo& t) const {
    const JobInfo* victim = t.job;
    if (!t.preemptable || !victim || victim == &job || !Cache::Schedulable(*victim) || !victim->gang_evictable)
      return false;
    if (!reclaiming())
      return In(t.status, kPreemptableMask) && victim->queue == job.queue && victim->priority < job.priority;
    const QueueInfo* vq = ssn.FindQueue(victim->queue);
    return t.status == TaskStatus::kRunning && victim->queue != job.queue && vq && vq->reclaimable;
  }

  // The bundles of the domain's candidates the plugins allow, in the order
  // they are taken.
  std::vector<Bundle> DomainBundles(Session& ssn, const QueueInfo& q, const JobInfo& job, const Resource& need,
                                    int domain, const std::vector<NodeInfo*>& nodes) const {
    absl::btree_map<std::string, std::vector<TaskInfo*>> by_job;
    for (const NodeInfo* n : nodes)
      for (const auto& [key, t] : n->tasks)
        if (Candidate(ssn, job, *t)) by_job[t->job->key].push_back(t);
    std::vector<Bundle> bundles;
    for (const auto& [key, tasks] : by_job) {
      const JobInfo& victim = *tasks.front()->job;
      for (Bundle& b : MakeBundles(victim, tasks, ssn.topology().GangsOf(victim))) bundles.push_back(std::move(b));
    }
    if (bundles.empty()) return {};
    VictimFirst first = [&](const JobInfo& l, const JobInfo& r) {
      if (!reclaiming()) return ssn.JobOrder(r, l);
      const QueueInfo *lq = ssn.FindQueue(l.queue), *rq = ssn.FindQueue(r.queue);
      return lq && rq && lq != rq && ssn.VictimQueueOrder(*lq, *rq, q);
    };
    SortBundles(&bundles, need, first);
    std::vector<TaskInfo*> allowed = ssn.UnifiedEvictable({opts_.kind, &job, domain}, Flatten(bundles));
    bundles = KeepAllowed(bundles, {allowed.begin(), allowed.end()});
    SortBundles(&bundles, need, first);
    if (!opts_.allow_whole) std::erase_if(bundles, [](const Bundle& b) { return b.whole; });
    return bundles;
  }

  // Volcano's BuildNominationPlanInDomain: the victims evicted and the job's
  // gangs placed within the domain until it is pipelined (a ready job: its
  // first gang); the applied statement if so, else the session as it was.
  static std::optional<Statement> Simulate(Session& ssn, const QueueInfo& q, JobInfo* job, const Worksheet& ws,
                                           const JobGangs& g, int domain, const std::vector<TaskInfo*>& victims) {
    if (ws.Empty()) return std::nullopt;
    const bool was_ready = ssn.JobReady(*job);
    Statement plan(ssn);
    for (TaskInfo* v : victims) plan.Evict(v);
    bool pipelined = false;
    for (int gi : GangOrder(ssn, ws, g)) {
      std::optional<Statement> placed = PlaceGang(ssn, q, job, ws.tasks.at(gi), g, gi, domain);
      if (!placed) break;
      plan.Merge(*placed);
      pipelined = ssn.JobPipelined(*job);
      if (was_ready || pipelined) break;
    }
    if (pipelined) return plan;
    plan.Discard();
    return std::nullopt;
  }

  static std::optional<Statement> PlaceGang(Session& ssn, const QueueInfo& q, JobInfo* job, const TaskList& tasks,
                                            const JobGangs& g, int gi, int domain) {
    const TopologyUnit& gang = g.gangs[gi];
    if (!g.hard()) return SimulateGangAt(ssn, q, job, gang, tasks, domain);
    for (const std::vector<int>& gradient : ssn.HyperNodeGradient(gang, domain, SearchPurpose::kEvict))
      for (int hn : gradient)
        if (std::optional<Statement> placed = SimulateGangAt(ssn, q, job, gang, tasks, hn)) return placed;
    return std::nullopt;
  }

  GangEvictOptions opts_;
};

absl::StatusOr<GangEvictOptions> OptionsFrom(EvictionKind kind, const Arguments& args) {
  if (auto s = args.CheckKnown({"maxDomains", "allowWholeBundle"}); !s.ok()) return s;
  GangEvictOptions opts{kind};
  auto max_domains = args.Int("maxDomains", kDefaultMaxDomains);
  if (!max_domains.ok()) return max_domains.status();
  // Volcano falls back to the default for a value below 1.
  opts.max_domains = *max_domains < 1 || *max_domains > (1 << 20) ? kDefaultMaxDomains : static_cast<int>(*max_domains);
  auto whole = args.Bool("allowWholeBundle", true);
  if (!whole.ok()) return whole.status();
  opts.allow_whole = *whole;
  return opts;
}

ActionOr NewGangEvictAction(EvictionKind kind, const Arguments& args) {
  auto opts = OptionsFrom(kind, args);
  if (!opts.ok()) return opts.status();
  return std::make_unique<GangEvictAction>(*opts);
}

}  // namespace

ActionOr NewGangPreemptAction(const Arguments& args) {
  return NewGangEvictAction(EvictionKind::kGangPreempt, args);
}

ActionOr NewGangReclaimAction(const Arguments& args) {
  return NewGangEvictAction(EvictionKind::kGangReclaim, args);
}

}  // namespace volcanic
