// Plugins and actions: the two kinds of unit a configuration names.
//
// A plugin is built per session from its `arguments` and registers callbacks
// for extension points in OnSessionOpen, as Volcano's plugins do; the session
// combines them across tiers (framework/tiers.h). An action runs once per
// session, in the configured order.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "volcanic/framework/conf.h"

namespace volcanic {

class Session;

class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual void OnSessionOpen(Session& ssn) = 0;
  virtual void OnSessionClose(Session& ssn) {}
};

class Action {
 public:
  virtual ~Action() = default;
  virtual void Execute(Session& ssn) = 0;
};

// Builds a plugin from its name and arguments; a bad argument is a
// ConfigError naming the plugin and the argument.
using PluginFactory = std::function<absl::StatusOr<std::unique_ptr<Plugin>>(const Arguments&)>;
using ActionFactory = std::function<absl::StatusOr<std::unique_ptr<Action>>(const Arguments&)>;

// The plugins and actions a configuration may name. Built-ins are added
// explicitly by RegisterBuiltins (plugins/builtins.cc, actions/builtins.cc);
// Python plugins are added at run time, possibly while sessions run in other
// threads: the plugin table is guarded by a mutex, and factories are called
// outside it (a Python factory takes the GIL).
class Registry {
 public:
  static Registry& Global();

  void AddPlugin(const std::string& name, PluginFactory factory);
  void AddAction(const std::string& name, ActionFactory factory);
  absl::StatusOr<std::unique_ptr<Plugin>> BuildPlugin(const std::string& name, const Arguments& args) const;
  absl::StatusOr<std::unique_ptr<Action>> BuildAction(const std::string& name, const Arguments& args) const;
  std::vector<std::string> PluginNames() const;  // sorted
  std::vector<std::string> ActionNames() const;  // sorted
  bool IsBuiltinPlugin(const std::string& name) const;

 private:
  Registry();
  mutable std::mutex mu_;
  size_t builtin_plugins_ = 0;  // the first entries of plugins_
  std::vector<std::pair<std::string, PluginFactory>> plugins_;
  std::vector<std::pair<std::string, ActionFactory>> actions_;
};

void RegisterBuiltinPlugins(Registry& r);
void RegisterBuiltinActions(Registry& r);

}  // namespace volcanic
