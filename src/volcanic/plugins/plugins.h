// Factories of the built-in plugins (reference §4.6), one .cc each.
#pragma once

#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "volcanic/api/vgpu.h"
#include "volcanic/framework/conf.h"
#include "volcanic/framework/plugin.h"

namespace volcanic {

using PluginOr = absl::StatusOr<std::unique_ptr<Plugin>>;

PluginOr NewPriorityPlugin(const Arguments& args);
PluginOr NewGangPlugin(const Arguments& args);
PluginOr NewConformancePlugin(const Arguments& args);
PluginOr NewDrfPlugin(const Arguments& args);
PluginOr NewProportionPlugin(const Arguments& args);
PluginOr NewPredicatesPlugin(const Arguments& args);
PluginOr NewNodeOrderPlugin(const Arguments& args);
PluginOr NewBinpackPlugin(const Arguments& args);
PluginOr NewOvercommitPlugin(const Arguments& args);
PluginOr NewCapacityPlugin(const Arguments& args);
PluginOr NewSlaPlugin(const Arguments& args);
PluginOr NewDeviceSharePlugin(const Arguments& args);
PluginOr NewFgdPlugin(const Arguments& args);
PluginOr NewRandomPlugin(const Arguments& args);
PluginOr NewNetworkTopologyAwarePlugin(const Arguments& args);
PluginOr NewPdbPlugin(const Arguments& args);
PluginOr NewResourceQuotaPlugin(const Arguments& args);
PluginOr NewResourceStrategyFitPlugin(const Arguments& args);
PluginOr NewNodeGroupPlugin(const Arguments& args);
PluginOr NewCdpPlugin(const Arguments& args);
PluginOr NewTaskTopologyPlugin(const Arguments& args);
PluginOr NewNumaAwarePlugin(const Arguments& args);
PluginOr NewTdmPlugin(const Arguments& args);  // tdm.cc
PluginOr NewReschedulingPlugin(const Arguments& args);  // rescheduling.cc
PluginOr NewUsagePlugin(const Arguments& args);  // usage.cc

// The card order of the first deviceshare plugin `conf` configures with vGPU
// sharing on (deviceshare.VGPUEnable), if any: fgd scores over its cards.
std::optional<GpuPolicy> VgpuPolicyIn(const SchedulerConf& conf);

}  // namespace volcanic
