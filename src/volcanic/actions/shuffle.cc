// shuffle (Volcano's pkg/scheduler/actions/shuffle): the Running tasks of the
// session's jobs are offered to the plugins' VictimTasks point (tdm, for
// example, names the pods on revocable zones that have closed), and every
// task they name is evicted.
//
// Deterministic where Volcano is not: Volcano evicts in the iteration order
// of a Go map; here the victims are evicted in the order of their pod keys
// ("namespace/name"). Only tasks still Running are evicted (a plugin may name
// tasks it was not offered). The evictions are committed at once, as
// Volcano's ssn.Evict is.
//
// Cost: O(tasks of the session's jobs) plus what the plugins take.
#include <algorithm>

#include "volcanic/actions/actions.h"
#include "volcanic/framework/session.h"
#include "volcanic/framework/statement.h"

namespace volcanic {
namespace {

class ShuffleAction : public Action {
 public:
  void Execute(Session& ssn) override {
    std::vector<TaskInfo*> running;
    for (const auto& [key, job] : ssn.jobs())
      for (const auto& [task_key, t] : job->tasks)
        if (t->status == TaskStatus::kRunning) running.push_back(t);
    std::vector<TaskInfo*> victims = ssn.VictimTasks(running);
    std::sort(victims.begin(), victims.end(), [](const TaskInfo* l, const TaskInfo* r) { return l->key < r->key; });
    Statement stmt(ssn);
    for (TaskInfo* v : victims)
      if (v->status == TaskStatus::kRunning) stmt.Evict(v);
    stmt.Commit();
  }
};

}  // namespace

ActionOr NewShuffleAction(const Arguments& args) {
  if (auto s = args.CheckKnown({}); !s.ok()) return s;
  return std::make_unique<ShuffleAction>();
}

}  // namespace volcanic
