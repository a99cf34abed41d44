// preempt with `enableTopologyAwarePreemption: true` (Volcano's name for
// kube-scheduler's default preemption, pkg/scheduler/actions/preempt/
// preempt.go topologyAwarePreempt): instead of taking the first node, by
// score, where evictions make room, dry-run a number of nodes, find on each
// the fewest victims (evict in victim order until the preemptor fits, then
// spare again every victim, highest priority first, without which it still
// fits) and choose the node whose victims cost least.
//
// Deterministic where Volcano is not: the dry run walks the nodes in session
// order from the first (Volcano starts at a random offset and checks them in
// parallel, keeping whichever finish first), and a tie after every criterion
// goes to the first node in that order (Volcano's map order).
#pragma once

#include "absl/status/statusor.h"
#include "volcanic/actions/victims.h"
#include "volcanic/framework/conf.h"

namespace volcanic {

// How many candidate nodes the dry run collects before choosing (Volcano's
// calculateNumCandidates): `min_percentage` of the nodes, at least
// `min_absolute`, at most `max_absolute` and the number of nodes.
struct CandidateSearch {
  bool enabled = false;
  int min_percentage = 10, min_absolute = 1, max_absolute = 100;

  int Count(int nodes) const;
  // The preempt action's arguments enableTopologyAwarePreemption,
  // minCandidateNodesPercentage, minCandidateNodesAbsolute and
  // maxCandidateNodesAbsolute (topologyAwarePreemptWorkerNum is accepted:
  // the dry run is sequential).
  static absl::StatusOr<CandidateSearch> FromArguments(const Arguments& args);
};

// Finds the best candidate among `nodes` (PreemptionNodes) and, if there is
// one, evicts its victims and pipelines `preemptor` there, joining `stmt`.
bool PreemptOnBestCandidate(Session& ssn, Statement& stmt, TaskInfo* preemptor, const std::vector<NodeInfo*>& nodes,
                            const VictimFilter& filter, const CandidateSearch& search);

}  // namespace volcanic
