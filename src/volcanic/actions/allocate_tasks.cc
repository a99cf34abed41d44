#include "volcanic/actions/allocate_tasks.h"

#include "absl/strings/str_cat.h"
#include "volcanic/framework/heap.h"
#include "volcanic/framework/node_search.h"

namespace volcanic {

TaskList PendingTasks(Session& ssn, const std::vector<TaskInfo*>& of) {
  TaskList list;
  for (TaskInfo* t : of)
    if (t->status == TaskStatus::kPending && !t->best_effort && (!t->gated || t->queue_gate_only))
      list.tasks.push_back(t);
  SortByOrder(list.tasks, [&](const TaskInfo* a, const TaskInfo* b) { return ssn.TaskOrder(*a, *b); });
  return list;
}

namespace {

// The gang's HyperNode once `node` holds one more of its pods (Volcano's
// getNewAllocatedHyperNode: the node's lowest-tier HyperNode, if any).
int WithNode(const HyperNodeTree& tree, int allocated, const NodeInfo& node) {
  int leaf = tree.LeafOf(node.index);
  return leaf == HyperNodeTree::kNone ? allocated : tree.Lca(leaf, allocated);
}

}  // namespace

std::optional<Statement> AllocateTasks(Session& ssn, const QueueInfo& q, JobInfo* job, TaskList& tasks,
                                       const NodeScope& scope) {
  auto ready = [&] { return scope.unit ? ssn.SubJobReady(*job, *scope.unit) : ssn.JobReady(*job); };
  Statement stmt(ssn);
  int allocated = scope.unit && scope.unit->with_topology ? scope.unit->allocated : HyperNodeTree::kNone;
  size_t candidates = scope.nodes.empty() ? ssn.nodes().size() : scope.nodes.size();
  while (!tasks.Empty()) {
    TaskInfo* task = tasks.Pop();
    if (!ssn.Allocatable(q, *task)) {
      ssn.NoteSkipped(*task, ssn.QueueBindingRefusal(*task).value_or(absl::StrCat(
                                 "Queue <", q.name, "> is overused when considering task <", task->name,
                                 ">, ignore it.")));
      continue;
    }
    if (task->gated) {
      if (ssn.features().queue_allocation_gate && task->queue_gate_opt_in) ssn.Ungate(*task);
      continue;
    }
    if (const FitErrors* role_errors = ssn.RoleFitErrors(*task)) {
      // Volcano skips a role that already failed predicates; its reason is
      // the role's.
      ssn.SetFitErrors(*task, *role_errors);
      continue;
    }
    if (absl::Status pre = ssn.PrePredicate(*task); !pre.ok()) {
      FitErrors fe;
      for (size_t i = 0; i < candidates; ++i) fe.AddNode({std::string(pre.message())});
      ssn.SetFitErrors(*task, std::move(fe));
      break;
    }
    if (scope.unit && scope.unit->with_topology) ssn.topology().SetPlacing(task, allocated);
    FitErrors fe;
    NodeSearch::Result r = ssn.node_search().Find(*task, true, &fe, scope.nodes);
    if (!r.node) {
      ssn.SetFitErrors(*task, std::move(fe));
      if (ssn.NeedContinueAllocating(*job)) continue;
      break;
    }
    absl::Status placed = r.fits_idle ? stmt.Allocate(task, r.node) : stmt.Pipeline(task, r.node);
    if (!placed.ok()) {
      // A plugin refused it there (Volcano's allocate logs it and goes on to
      // the next task, recording no fit error).
      ssn.NoteSkipped(*task, std::string(placed.message()));
      continue;
    }
    if (scope.unit && scope.unit->with_topology) allocated = WithNode(ssn.topology().tree(), allocated, *r.node);
    if (ready()) break;
  }
  if (ready() || (scope.unit ? ssn.SubJobPipelined(*job, *scope.unit) : ssn.JobPipelined(*job))) return stmt;
  stmt.Discard();
  return std::nullopt;
}

}  // namespace volcanic
