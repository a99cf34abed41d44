// Plugins and actions: the two kinds of unit a configuration names.
//
// A plugin is built per session from its `arguments` and registers callbacks
// for extension points in OnSessionOpen, as Volcano's plugins do, through a
// handle that knows the plugin's name (plugin_handle.h; what each callback
// must promise is extension_points.h); the session combines them across
// tiers (framework/tiers.h). An action runs once per session, in the
// configured order. Registry (registry.h) maps names to factories.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "volcanic/framework/conf.h"

namespace volcanic {

class Session;
class PluginHandle;

class Plugin {
 public:
  virtual ~Plugin() = default;
  // Registers the plugin's callbacks; h.session() is the session.
  virtual void OnSessionOpen(PluginHandle& h) = 0;
  virtual void OnSessionClose(Session& ssn) {}
  // Whether the plugin's node-local answers (predicate, node order) for a task
  // class and a node stay the same in later sessions while the node does not
  // change, so they may be kept across sessions (NodeSearch): true for the
  // built-ins, whose answers follow from their arguments, the task and the
  // node; false for Python plugins, built anew each session.
  virtual bool AnswersOutliveSession() const { return true; }
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

}  // namespace volcanic
