// Allocate for a job whose gangs must stay within a tier of the network or
// that has gangs of its own (subGroupPolicy): Volcano's allocateForJob and
// allocateForSubJob (actions/allocate/allocate.go). The job is tried in
// every HyperNode of the lowest tier its gradient offers (a dry run each),
// its gangs one after another (those needed for each policy's minSubGroups
// first) until the job is ready; the best-scored success is replayed, and only
// if no HyperNode of that tier takes the job is the next tier tried. Within
// the job's HyperNode each gang goes the same way down to the lowest tier that
// takes it. Ties between HyperNodes go to the first in the gradient's order
// (Volcano picks one at random).
#pragma once

#include <map>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "volcanic/actions/allocate_tasks.h"

namespace volcanic {

// Volcano's JobWorksheet: each gang's pending tasks, and the gangs needed to
// reach each policy's minSubGroups.
struct Worksheet {
  std::map<int, TaskList> tasks;  // gang index in JobGangs::gangs -> pending tasks
  absl::flat_hash_set<int> required;
  bool Empty() const;
};

// The session's nodes in a HyperNode (an index in the session's tree).
std::vector<NodeInfo*> NodesOf(const Session& ssn, int hypernode);

// The worksheet of the job's gangs that are not ready yet.
Worksheet WorksheetOf(Session& ssn, const JobInfo& job, const JobGangs& gangs);

// The tasks placed: the statement if the job is ready or pipelined, with
// where the job and its gangs went; Decided records that once committed.
struct TopologyPlacement {
  Statement stmt;
  int job_hypernode;
  std::map<int, int> gang_hypernodes;  // gang index -> its HyperNode now
  void Decided(JobGangs& gangs, const HyperNodeTree& tree) const;
};
std::optional<TopologyPlacement> AllocateInTopology(Session& ssn, const QueueInfo& q, JobInfo* job, Worksheet& ws,
                                                    JobGangs& gangs);

}  // namespace volcanic
