#include "volcanic/actions/preempt_candidates.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "volcanic/api/errors.h"
#include "volcanic/framework/session.h"
#include "volcanic/framework/statement.h"

namespace volcanic {
namespace {

struct Candidate {
  NodeInfo* node;
  std::vector<TaskInfo*> victims;  // highest priority first, as spared
};

// Whether the preemptor fits `node` once `evicted` are gone (their evictions
// are tried and undone).
bool FitsWithout(Session& ssn, const TaskInfo& preemptor, const NodeInfo& node,
                 const std::vector<TaskInfo*>& evicted) {
  Statement trial(ssn);
  for (TaskInfo* t : evicted) trial.Evict(t);
  bool fits = FitsAfterEvictions(ssn, preemptor, node);
  trial.Discard();
  return fits;
}

// Evicts the allowed victims in order until the preemptor fits (at least
// one: Volcano checks after each eviction); empty if it never does.
std::vector<TaskInfo*> EvictUntilFits(Session& ssn, const TaskInfo& preemptor, const NodeInfo& node,
                                      const std::vector<TaskInfo*>& allowed) {
  std::vector<TaskInfo*> evicted;
  Statement trial(ssn);
  bool fits = false;
  for (TaskInfo* victim : allowed) {
    evicted.push_back(victim);
    trial.Evict(victim);
    if ((fits = FitsAfterEvictions(ssn, preemptor, node))) break;
  }
  trial.Discard();
  return fits ? evicted : std::vector<TaskInfo*>{};
}

// The fewest victims on `node` (Volcano's SelectVictimsOnNode): evict in
// victim order until the preemptor fits, then give back each one, highest
// priority (last evicted) first, that it can do without.
std::optional<Candidate> VictimsOnNode(Session& ssn, const TaskInfo& preemptor, NodeInfo* node,
                                       const VictimFilter& filter) {
  std::vector<TaskInfo*> evicted =
      EvictUntilFits(ssn, preemptor, *node, AllowedVictims(ssn, preemptor, *node, filter, VictimRule::kPreemptable));
  if (evicted.empty()) return std::nullopt;
  Candidate c{node, {}};
  std::vector<TaskInfo*> still_evicted = evicted;
  for (auto it = evicted.rbegin(); it != evicted.rend(); ++it) {
    std::vector<TaskInfo*> without_it;
    for (TaskInfo* t : still_evicted)
      if (t != *it) without_it.push_back(t);
    if (FitsWithout(ssn, preemptor, *node, without_it)) {
      still_evicted = std::move(without_it);
    } else {
      c.victims.push_back(*it);
    }
  }
  return c;
}

// The earliest start among the highest-priority victims; a victim not
// started yet counts as starting now (Volcano's GetEarliestPodStartTime).
int64_t EarliestTopStart(const std::vector<TaskInfo*>& victims, int64_t now_ms) {
  auto start = [&](const TaskInfo* t) { return t->start_ms >= 0 ? t->start_ms : now_ms; };
  int32_t top = victims.front()->priority;
  int64_t earliest = start(victims.front());
  for (const TaskInfo* t : victims) {
    if (t->priority > top) {
      top = t->priority;
      earliest = start(t);
    } else if (t->priority == top) {
      earliest = std::min(earliest, start(t));
    }
  }
  return earliest;
}

// kube-scheduler's pickOneNodeForPreemption without PDBs: the lowest
// highest-priority victim, then the lowest sum of priorities, then the
// fewest victims, then the latest start of the top victims; each criterion
// only among the nodes tied on the ones before.
const Candidate& PickOne(const std::vector<Candidate>& candidates, int64_t now_ms) {
  using Score = std::function<int64_t(const Candidate&)>;
  const Score scores[] = {
      [](const Candidate& c) { return -int64_t{c.victims.front()->priority}; },
      [](const Candidate& c) {
        int64_t sum = 0;
        for (const TaskInfo* t : c.victims) sum += int64_t{t->priority} + (int64_t{1} << 31);
        return -sum;
      },
      [](const Candidate& c) { return -static_cast<int64_t>(c.victims.size()); },
      [now_ms](const Candidate& c) { return EarliestTopStart(c.victims, now_ms); },
  };
  std::vector<const Candidate*> tied;
  for (const Candidate& c : candidates) tied.push_back(&c);
  for (const Score& score : scores) {
    if (tied.size() == 1) break;
    int64_t best = std::numeric_limits<int64_t>::min();
    for (const Candidate* c : tied) best = std::max(best, score(*c));
    std::erase_if(tied, [&](const Candidate* c) { return score(*c) != best; });
  }
  return *tied.front();
}

}  // namespace

int CandidateSearch::Count(int nodes) const {
  int n = std::max(nodes * min_percentage / 100, min_absolute);
  return std::min({n, max_absolute, nodes});
}

absl::StatusOr<CandidateSearch> CandidateSearch::FromArguments(const Arguments& args) {
  CandidateSearch s;
  auto enabled = args.Bool("enableTopologyAwarePreemption", false);
  if (!enabled.ok()) return enabled.status();
  s.enabled = *enabled;
  struct Field {
    const char* key;
    int* value;
  };
  for (Field f : {Field{"minCandidateNodesPercentage", &s.min_percentage},
                  Field{"minCandidateNodesAbsolute", &s.min_absolute},
                  Field{"maxCandidateNodesAbsolute", &s.max_absolute}}) {
    auto v = args.Int(f.key, *f.value);
    if (!v.ok()) return v.status();
    if (*v < 0 || *v > std::numeric_limits<int>::max())
      return ConfigError(absl::StrCat("action preempt: argument ", f.key, ": ", *v, " is out of range"));
    *f.value = static_cast<int>(*v);
  }
  if (auto workers = args.Int("topologyAwarePreemptWorkerNum", 16); !workers.ok()) return workers.status();
  return s;
}

bool PreemptOnBestCandidate(Session& ssn, Statement& stmt, TaskInfo* preemptor, const std::vector<NodeInfo*>& nodes,
                            const VictimFilter& filter, const CandidateSearch& search) {
  const int wanted = search.Count(static_cast<int>(nodes.size()));
  std::vector<Candidate> candidates;
  for (NodeInfo* node : nodes) {
    if (static_cast<int>(candidates.size()) >= wanted) break;
    if (auto c = VictimsOnNode(ssn, *preemptor, node, filter)) candidates.push_back(std::move(*c));
  }
  if (candidates.empty()) return false;
  const Candidate& best = PickOne(candidates, ssn.now_ms());
  if (SessionMetrics* m = PreemptMetrics(ssn, VictimRule::kPreemptable)) ++m->preemption_attempts;
  Statement trial(ssn);
  for (TaskInfo* victim : best.victims) trial.Evict(victim);
  if (!trial.Pipeline(preemptor, best.node).ok()) {
    trial.Discard();  // a plugin refused it: no eviction either (Volcano's topologyAwarePreempt)
    return false;
  }
  stmt.Merge(trial);
  return true;
}

}  // namespace volcanic
