#include "volcanic/framework/statement.h"

#include "volcanic/api/status_macros.h"
#include "volcanic/framework/session.h"

namespace volcanic {

absl::Status Statement::Allocate(TaskInfo* t, NodeInfo* n) {
  Op op{Kind::kAllocate, t, t->status, t->node, n};
  RETURN_IF_ERROR(ssn_.AllocateTask(t, n));
  ops_.push_back(op);
  return absl::OkStatus();
}

absl::Status Statement::Pipeline(TaskInfo* t, NodeInfo* n) {
  Op op{Kind::kPipeline, t, t->status, t->node, n};
  RETURN_IF_ERROR(ssn_.PipelineTask(t, n));
  ops_.push_back(op);
  return absl::OkStatus();
}

void Statement::Evict(TaskInfo* t) {
  ops_.push_back({Kind::kEvict, t, t->status, t->node});
  ssn_.EvictTask(t);
}

void Statement::Commit() {
  for (const Op& op : ops_) {
    if (op.kind == Kind::kAllocate) ssn_.Bind(op.task);
    if (op.kind == Kind::kEvict) ssn_.RecordEviction(op.task);
  }
  ops_.clear();
}

void Statement::Merge(Statement& other) {
  ops_.insert(ops_.end(), other.ops_.begin(), other.ops_.end());
  other.ops_.clear();
}

void Statement::Discard() {
  for (auto it = ops_.rbegin(); it != ops_.rend(); ++it) ssn_.RestoreTask(it->task, it->prev_status, it->prev_node);
  ops_.clear();
}

}  // namespace volcanic
