// The built-in plugins, registered explicitly (no static self-registration).
#include "volcanic/plugins/plugins.h"

#include "volcanic/api/status_macros.h"
#include "volcanic/framework/registry.h"

namespace volcanic {

absl::Status RegisterBuiltinPlugins(Registry& r) {
  RETURN_IF_ERROR(r.AddPlugin("priority", NewPriorityPlugin));
  RETURN_IF_ERROR(r.AddPlugin("gang", NewGangPlugin));
  RETURN_IF_ERROR(r.AddPlugin("conformance", NewConformancePlugin));
  RETURN_IF_ERROR(r.AddPlugin("drf", NewDrfPlugin));
  RETURN_IF_ERROR(r.AddPlugin("proportion", NewProportionPlugin));
  RETURN_IF_ERROR(r.AddPlugin("predicates", NewPredicatesPlugin));
  RETURN_IF_ERROR(r.AddPlugin("nodeorder", NewNodeOrderPlugin));
  RETURN_IF_ERROR(r.AddPlugin("binpack", NewBinpackPlugin));
  RETURN_IF_ERROR(r.AddPlugin("network-topology-aware", NewNetworkTopologyAwarePlugin));
  RETURN_IF_ERROR(r.AddPlugin("overcommit", NewOvercommitPlugin));
  RETURN_IF_ERROR(r.AddPlugin("capacity", NewCapacityPlugin));
  RETURN_IF_ERROR(r.AddPlugin("sla", NewSlaPlugin));
  RETURN_IF_ERROR(r.AddPlugin("deviceshare", NewDeviceSharePlugin));
  RETURN_IF_ERROR(r.AddPlugin("fgd", NewFgdPlugin));
  RETURN_IF_ERROR(r.AddPlugin("random", NewRandomPlugin));
  RETURN_IF_ERROR(r.AddPlugin("pdb", NewPdbPlugin));
  RETURN_IF_ERROR(r.AddPlugin("resourcequota", NewResourceQuotaPlugin));
  RETURN_IF_ERROR(r.AddPlugin("resource-strategy-fit", NewResourceStrategyFitPlugin));
  RETURN_IF_ERROR(r.AddPlugin("nodegroup", NewNodeGroupPlugin));
  RETURN_IF_ERROR(r.AddPlugin("tdm", NewTdmPlugin));
  RETURN_IF_ERROR(r.AddPlugin("rescheduling", NewReschedulingPlugin));
  RETURN_IF_ERROR(r.AddPlugin("usage", NewUsagePlugin));
  RETURN_IF_ERROR(r.AddPlugin("cdp", NewCdpPlugin));
  RETURN_IF_ERROR(r.AddPlugin("task-topology", NewTaskTopologyPlugin));
  RETURN_IF_ERROR(r.AddPlugin("numa-aware", NewNumaAwarePlugin));
  return absl::OkStatus();
}

}  // namespace volcanic
