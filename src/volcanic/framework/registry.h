// The plugins and actions a configuration may name: a value, owned by each
// Scheduler (as kube-scheduler's framework.Registry is), not a process-wide
// table. Built explicitly: Builtins() holds the built-in plugins and actions
// (RegisterBuiltinPlugins, RegisterBuiltinActions; no static
// self-registration); a scheduler with more plugins (Python plugins, test
// plugins) copies it and adds them.
//
// Bad input: adding a name that is already there is a ConfigError naming it
// (never a silent replacement); building an unknown name is a ConfigError
// listing the known ones.
// Not thread-safe for writing: fill it before the scheduler runs.
// Cost: lookups are linear in the (short) list of names.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "volcanic/framework/plugin.h"

namespace volcanic {

class Registry {
 public:
  Registry() = default;
  // The built-in plugins and actions, made once and never changed.
  static const Registry& Builtins();

  absl::Status AddPlugin(const std::string& name, PluginFactory factory);
  absl::Status AddAction(const std::string& name, ActionFactory factory);
  absl::StatusOr<std::unique_ptr<Plugin>> BuildPlugin(const std::string& name, const Arguments& args) const;
  absl::StatusOr<std::unique_ptr<Action>> BuildAction(const std::string& name, const Arguments& args) const;
  std::vector<std::string> PluginNames() const;  // sorted
  std::vector<std::string> ActionNames() const;  // sorted

 private:
  std::vector<std::pair<std::string, PluginFactory>> plugins_;
  std::vector<std::pair<std::string, ActionFactory>> actions_;
};

absl::Status RegisterBuiltinPlugins(Registry& r);
absl::Status RegisterBuiltinActions(Registry& r);

}  // namespace volcanic
