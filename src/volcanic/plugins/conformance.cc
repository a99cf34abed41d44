// conformance (reference §4.6): never evicts critical pods or pods in
// kube-system.
#include "volcanic/framework/session.h"
#include "volcanic/plugins/plugins.h"

namespace volcanic {
namespace {

bool Protected(const TaskInfo& t) {
  return t.ns == "kube-system" || t.priority_class_name == "system-cluster-critical" ||
         t.priority_class_name == "system-node-critical";
}

class ConformancePlugin : public Plugin {
 public:
  void OnSessionOpen(PluginHandle& h) override {
    auto evictable = [](const auto&, const std::vector<TaskInfo*>& candidates) {
      std::vector<TaskInfo*> victims;
      for (TaskInfo* t : candidates)
        if (!Protected(*t)) victims.push_back(t);
      return std::optional<std::vector<TaskInfo*>>(std::move(victims));
    };
    h.AddPreemptableFn(evictable);
    h.AddReclaimableFn(evictable);
    h.AddUnifiedEvictableFn(evictable);
  }
};

}  // namespace

PluginOr NewConformancePlugin(const Arguments& args) {
  if (auto s = args.CheckKnown({}); !s.ok()) return s;
  return std::make_unique<ConformancePlugin>();
}

}  // namespace volcanic
