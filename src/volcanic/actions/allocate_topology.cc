#include "volcanic/actions/allocate_topology.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "volcanic/framework/heap.h"

namespace volcanic {
namespace {

// What a dry run in one HyperNode did, to be replayed if it is chosen.
struct Trial {
  int hypernode = HyperNodeTree::kNone;
  std::vector<Statement::Op> ops;
  double score = 0;
};

// The trial's placements again; nullopt, with nothing left applied, when a
// plugin refuses one of them now (Volcano's RecoverOperations fails).
std::optional<Statement> Replay(Session& ssn, const std::vector<Statement::Op>& ops) {
  Statement stmt(ssn);
  for (const Statement::Op& op : ops) {
    absl::Status placed = op.kind == Statement::Kind::kAllocate ? stmt.Allocate(op.task, op.to)
                                                                 : stmt.Pipeline(op.task, op.to);
    if (!placed.ok()) {
      stmt.Discard();
      return std::nullopt;
    }
  }
  return stmt;
}

// The index of the best score; ties go to the first.
size_t Best(const std::vector<double>& scores) {
  size_t best = 0;
  for (size_t i = 1; i < scores.size(); ++i)
    if (scores[i] > scores[best]) best = i;
  return best;
}

struct GangTrial : Trial {
  TaskList rest;  // the gang's tasks left after it
};

// The gang within `within` (Volcano's allocateForSubJob): the first tier of
// its gradient where some HyperNode takes it, the best-scored of those.
std::optional<GangTrial> PlaceGang(Session& ssn, const QueueInfo& q, JobInfo* job, const TaskList& tasks,
                                   TopologyUnit& gang, int within) {
  for (const std::vector<int>& gradient : ssn.HyperNodeGradient(gang, within, SearchPurpose::kAllocate)) {
    std::vector<GangTrial> trials;
    for (int hn : gradient) {
      ssn.ClearFitErrors(*job);
      std::vector<NodeInfo*> nodes = NodesOf(ssn, hn);
      if (nodes.empty()) continue;
      GangTrial trial;
      trial.hypernode = hn;
      trial.rest = tasks;
      std::optional<Statement> stmt = AllocateTasks(ssn, q, job, trial.rest, {nodes, &gang});
      if (!stmt || stmt->empty()) continue;
      trial.ops = stmt->ops();
      stmt->Discard();
      trials.push_back(std::move(trial));
    }
    if (trials.empty()) continue;
    std::vector<int> candidates;
    for (const GangTrial& t : trials) candidates.push_back(t.hypernode);
    std::vector<double> scores = ssn.HyperNodeScores(gang, candidates);
    size_t best = Best(scores);
    trials[best].score = scores[best];
    return std::move(trials[best]);
  }
  return std::nullopt;
}

// The job's trial in its HyperNode `hn`: gangs one after another until the
// job is ready; the statements stay applied (the caller discards them).
struct JobTrial : Trial {
  Worksheet rest;
  std::map<int, int> gang_hypernodes;
  std::vector<Statement> stmts;
};

JobTrial TryJob(Session& ssn, const QueueInfo& q, JobInfo* job, const Worksheet& ws, JobGangs& g, int hn) {
  JobTrial trial;
  trial.hypernode = hn;
  trial.rest = ws;
  auto first = [&](int l, int r) {
    bool lr = ws.required.contains(l), rr = ws.required.contains(r);
    if (lr != rr) return lr;
    return ssn.SubJobOrder(g.gangs[l], g.gangs[r]);
  };
  OrderedHeap<int> queue(first);
  for (const auto& [gi, tasks] : ws.tasks)
    if (!tasks.Empty()) queue.Push(gi);
  while (!queue.Empty()) {
    int gi = queue.Pop();
    TopologyUnit& gang = g.gangs[gi];
    std::optional<GangTrial> placed = PlaceGang(ssn, q, job, trial.rest.tasks[gi], gang, hn);
    if (!placed || placed->ops.empty()) continue;
    std::optional<Statement> replayed = Replay(ssn, placed->ops);
    if (!replayed) continue;
    trial.stmts.push_back(*std::move(replayed));
    trial.ops.insert(trial.ops.end(), placed->ops.begin(), placed->ops.end());
    trial.score += placed->score;
    trial.rest.tasks[gi] = std::move(placed->rest);
    // Where the gang is now, for its next round in this trial (Volcano sets it
    // on the sub-job and its recorder puts the old one back after the trial).
    gang.allocated = trial.gang_hypernodes[gi] = ssn.topology().tree().Lca(gang.allocated, placed->hypernode);
    if (!trial.rest.tasks[gi].Empty()) queue.Push(gi);
    if (ssn.JobReady(*job)) break;
  }
  return trial;
}

}  // namespace

std::vector<NodeInfo*> NodesOf(const Session& ssn, int hypernode) {
  std::vector<NodeInfo*> nodes;
  for (int i : ssn.topology().tree().at(hypernode).nodes) nodes.push_back(ssn.nodes()[i]);
  return nodes;
}

bool Worksheet::Empty() const {
  for (const auto& [gi, list] : tasks)
    if (!list.Empty()) return false;
  return true;
}

Worksheet WorksheetOf(Session& ssn, const JobInfo& job, const JobGangs& g) {
  Worksheet ws;
  std::vector<int> waiting;
  std::map<std::string, int32_t> ready;
  for (int gi = 0; gi < static_cast<int>(g.gangs.size()); ++gi) {
    if (ssn.SubJobReady(job, g.gangs[gi])) {
      ++ready[g.gangs[gi].group];
    } else {
      waiting.push_back(gi);
    }
    TaskList list = PendingTasks(ssn, g.gangs[gi].tasks);
    if (!list.Empty()) ws.tasks.emplace(gi, std::move(list));
  }
  // The fewest gangs not ready yet, in order, that bring each policy to its minSubGroups.
  SortByOrder(waiting, [&](int l, int r) { return ssn.SubJobOrder(g.gangs[l], g.gangs[r]); });
  for (int gi : waiting) {
    const std::string& group = g.gangs[gi].group;
    auto min = g.min_gangs.find(group);
    if (min != g.min_gangs.end() && ready[group] < min->second) {
      ws.required.insert(gi);
      ++ready[group];
    }
  }
  return ws;
}

void TopologyPlacement::Decided(JobGangs& g, const HyperNodeTree& tree) const {
  g.whole.allocated = tree.Lca(g.whole.allocated, job_hypernode);
  for (const auto& [gi, hn] : gang_hypernodes) g.gangs[gi].allocated = tree.Lca(g.gangs[gi].allocated, hn);
}

namespace {

// The order to try a gradient's HyperNodes in, when each trial's score is
// known before it runs: the job has one gang left to place and, in each
// HyperNode, that gang's search is the HyperNode alone, so a trial's score is
// the gang's HyperNodeOrder score there, which Volcano takes after the dry
// runs are undone, on the state as it is now. Best score first (ties in the
// gradient's order): the first HyperNode that takes the job is the one
// trying them all would choose. nullopt when some score is not known so.
std::optional<std::vector<int>> KnownBestFirst(Session& ssn, const Worksheet& ws, JobGangs& g,
                                               const std::vector<int>& gradient) {
  if (ws.tasks.size() != 1 || gradient.size() < 2) return std::nullopt;
  const TopologyUnit& gang = g.gangs[ws.tasks.begin()->first];
  for (int hn : gradient) {
    HyperNodeGradients inner = ssn.HyperNodeGradient(gang, hn, SearchPurpose::kAllocate);
    if (inner.size() > 1 || (inner.size() == 1 && inner[0] != std::vector<int>{hn})) return std::nullopt;
  }
  std::vector<double> scores;
  for (int hn : gradient) scores.push_back(ssn.HyperNodeScores(gang, {hn}).front());
  std::vector<int> order(gradient.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return scores[a] > scores[b]; });
  std::vector<int> out;
  for (int i : order) out.push_back(gradient[i]);
  return out;
}

}  // namespace

std::optional<TopologyPlacement> AllocateInTopology(Session& ssn, const QueueInfo& q, JobInfo* job, Worksheet& ws,
                                                    JobGangs& g) {
  int top = ssn.topology().tree().top();
  for (const std::vector<int>& gradient : ssn.HyperNodeGradient(g.whole, top, SearchPurpose::kAllocate)) {
    std::optional<std::vector<int>> known = KnownBestFirst(ssn, ws, g, gradient);
    std::vector<JobTrial> trials;
    for (int hn : known ? *known : gradient) {
      std::vector<int> before;
      for (const TopologyUnit& gang : g.gangs) before.push_back(gang.allocated);
      JobTrial trial = TryJob(ssn, q, job, ws, g, hn);
      for (size_t i = 0; i < before.size(); ++i) g.gangs[i].allocated = before[i];
      bool keep = !trial.ops.empty() && (ssn.JobReady(*job) || ssn.JobPipelined(*job));
      for (auto it = trial.stmts.rbegin(); it != trial.stmts.rend(); ++it) it->Discard();
      trial.stmts.clear();
      if (keep) trials.push_back(std::move(trial));
      if (keep && known) break;  // the best that takes it
    }
    if (trials.empty()) continue;
    std::vector<double> scores;
    for (const JobTrial& t : trials) scores.push_back(t.score);
    JobTrial& best = trials[Best(scores)];
    std::optional<Statement> replayed = Replay(ssn, best.ops);
    if (!replayed) return std::nullopt;
    ws = std::move(best.rest);
    return TopologyPlacement{*std::move(replayed), best.hypernode, std::move(best.gang_hypernodes)};
  }
  return std::nullopt;
}

}  // namespace volcanic
