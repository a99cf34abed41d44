// Volcano's Statement (reference §4.2): a transaction of allocate, pipeline
// and evict operations. Each operation changes the session at once; Commit
// makes allocations binds and evictions real, Discard undoes every operation
// in reverse order. A statement neither committed nor discarded (a pipelined
// gang) is undone when the session closes. Allocate and Pipeline fail when a
// plugin's event handler refuses the placement (extension_points.h): it is
// then undone already and not an operation of the statement.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "volcanic/api/types.h"

namespace volcanic {

class Session;

class Statement {
 public:
  explicit Statement(Session& ssn) : ssn_(ssn) {}

  absl::Status Allocate(TaskInfo* t, NodeInfo* n);
  absl::Status Pipeline(TaskInfo* t, NodeInfo* n);
  void Evict(TaskInfo* t);
  void Commit();
  void Discard();
  // Takes over `other`'s operations (already applied), leaving it empty:
  // Volcano's Merge, for a per-node trial that succeeded.
  void Merge(Statement& other);
  bool empty() const { return ops_.empty(); }

  enum class Kind { kAllocate, kPipeline, kEvict };
  struct Op {
    Kind kind;
    TaskInfo* task;
    TaskStatus prev_status;  // to restore on Discard
    NodeInfo* prev_node;
    NodeInfo* to = nullptr;  // where an allocate or pipeline put it
  };
  const std::vector<Op>& ops() const { return ops_; }

 private:
  Session& ssn_;
  std::vector<Op> ops_;
};

}  // namespace volcanic
