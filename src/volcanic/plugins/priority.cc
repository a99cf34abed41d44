// priority (reference §4.6): higher task priority first, higher job
// priority first.
#include "volcanic/framework/session.h"
#include "volcanic/plugins/plugins.h"

namespace volcanic {
namespace {

template <typename T>
int HigherFirst(const T& l, const T& r) {
  if (l.priority == r.priority) return 0;
  return l.priority > r.priority ? -1 : 1;
}

class PriorityPlugin : public Plugin {
 public:
  void OnSessionOpen(Session& ssn) override {
    ssn.AddTaskOrderFn("priority", HigherFirst<TaskInfo>);
    ssn.AddJobOrderFn("priority", HigherFirst<JobInfo>);
  }
};

}  // namespace

PluginOr NewPriorityPlugin(const Arguments& args) {
  if (auto s = args.CheckKnown({}); !s.ok()) return s;
  return std::make_unique<PriorityPlugin>();
}

}  // namespace volcanic
