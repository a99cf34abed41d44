// Allocate's task loop (Volcano's allocateResourcesForTasks), shared by the
// plain path and the network-topology search (allocate_topology.h).
#pragma once

#include <optional>
#include <vector>

#include "absl/types/span.h"
#include "volcanic/framework/session.h"
#include "volcanic/framework/statement.h"

namespace volcanic {

// A job's pending tasks in TaskOrder, consumed front to back; copied for a
// trial in one HyperNode (cheap: a vector of pointers and a cursor).
struct TaskList {
  std::vector<TaskInfo*> tasks;
  size_t next = 0;
  bool Empty() const { return next == tasks.size(); }
  TaskInfo* Pop() { return tasks[next++]; }
};

// The pending, schedulable tasks among `of` (a job's, or one gang's), in TaskOrder.
TaskList PendingTasks(Session& ssn, const std::vector<TaskInfo*>& of);

// Where the tasks may go: `nodes` (empty: every Ready node, through the node
// search's index) and, for a gang with a network topology, the gang (its
// `allocated` HyperNode is where its placed pods are; the nodes' scores read it).
struct NodeScope {
  absl::Span<NodeInfo* const> nodes;
  TopologyUnit* unit = nullptr;
};

// Places tasks until the job (with a scope's gang: the gang, Session::
// SubJobReady) is ready; the statement if it is ready or pipelined, else
// nothing (the statement is discarded).
std::optional<Statement> AllocateTasks(Session& ssn, const QueueInfo& q, JobInfo* job, TaskList& tasks,
                                       const NodeScope& scope = {});

}  // namespace volcanic
