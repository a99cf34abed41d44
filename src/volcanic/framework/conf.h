// Volcano's scheduler configuration (volcano-scheduler.conf): an `actions`
// string, `tiers` of plugins with per-extension-point enable flags and
// `arguments`, and per-action `configurations` (reference §4.4, §4.5).
//
// Bad input: an unknown action, plugin, enable flag or argument, or a value
// of the wrong type, is a ConfigError naming it and listing what is known.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "nlohmann/json.hpp"

namespace volcanic {

using nlohmann::json;

// Typed access to a plugin's or action's `arguments` map. Volcano accepts
// numbers written as strings ("10"), so do we.
class Arguments {
 public:
  Arguments() : args_(json::object()) {}
  Arguments(json args, std::string owner) : args_(std::move(args)), owner_(std::move(owner)) {}

  // Keys are views (JSON objects look them up without a string), as plugins
  // read their arguments each session.
  absl::StatusOr<double> Float(std::string_view key, double def) const;
  absl::StatusOr<int64_t> Int(std::string_view key, int64_t def) const;
  absl::StatusOr<bool> Bool(std::string_view key, bool def) const;
  absl::StatusOr<std::string> String(std::string_view key, const std::string& def) const;
  bool Has(std::string_view key) const { return args_.contains(key); }
  const json& raw() const { return args_; }
  // A ConfigError for the first key neither in `known` nor starting with one
  // of `prefixes`.
  absl::Status CheckKnown(absl::Span<const std::string_view> known,
                          absl::Span<const std::string_view> prefixes = {}) const;

 private:
  absl::Status TypeError(std::string_view key, const char* want) const;
  json args_;
  std::string owner_;  // "plugin binpack", for messages
};

struct PluginOption {
  std::string name;
  absl::flat_hash_map<std::string, bool> flags;  // only flags given in the conf
  Arguments arguments;
  // Missing flags default to true (Volcano's plugins/defaults.go).
  bool Enabled(absl::string_view flag) const {
    if (flags.empty()) return true;  // the common case, checked per plugin and flag every session
    auto it = flags.find(flag);
    return it == flags.end() || it->second;
  }
};

struct Tier {
  std::vector<PluginOption> plugins;
};

struct SchedulerConf {
  std::vector<std::string> actions;
  std::vector<Tier> tiers;
  absl::flat_hash_map<std::string, Arguments> action_arguments;
  bool HasAction(const std::string& name) const;
};

// Volcano's code default (pkg/scheduler/util.go DefaultSchedulerConf).
SchedulerConf DefaultSchedulerConf();

// The Volcano feature gates the engine reads (the scheduler's
// --feature-gates, pkg/features/volcano_features.go), at Volcano's defaults.
struct FeatureGates {
  // SchedulingGatesQueueAdmission (Alpha, off): allocate asks for the
  // queue-allocation gate of an opted-in pod to be removed once its queue
  // has room for it (Decisions::ungate), and capacity keeps that room for
  // the pod until it is placed.
  bool queue_allocation_gate = false;
};

class Registry;

// Parses the JSON form of the configuration (YAML is converted by Python).
// Checks action and plugin names and every plugin's arguments against
// `registry` (building each plugin once); without one, the built-ins.
absl::StatusOr<SchedulerConf> ParseSchedulerConf(const json& conf, const Registry& registry);
absl::StatusOr<SchedulerConf> ParseSchedulerConf(const json& conf);

// Volcano's ssn.HierarchyEnabled(plugin): the first entry of `plugin` decides,
// and only an explicit `enableHierarchy: true` turns it on (unlike the other
// enable flags, it has no default).
bool HierarchyEnabled(const SchedulerConf& conf, std::string_view plugin);

// The enable flags Volcano knows (reference §4.4).
const std::vector<std::string>& KnownEnableFlags();

}  // namespace volcanic
