// The built-in plugins, registered explicitly (no static self-registration).
#include "volcanic/plugins/plugins.h"

namespace volcanic {

void RegisterBuiltinPlugins(Registry& r) {
  r.AddPlugin("priority", NewPriorityPlugin);
  r.AddPlugin("gang", NewGangPlugin);
  r.AddPlugin("conformance", NewConformancePlugin);
  r.AddPlugin("drf", NewDrfPlugin);
  r.AddPlugin("proportion", NewProportionPlugin);
  r.AddPlugin("predicates", NewPredicatesPlugin);
  r.AddPlugin("nodeorder", NewNodeOrderPlugin);
  r.AddPlugin("binpack", NewBinpackPlugin);
  r.AddPlugin("overcommit", NewOvercommitPlugin);
  r.AddPlugin("capacity", NewCapacityPlugin);
  r.AddPlugin("sla", NewSlaPlugin);
}

}  // namespace volcanic
