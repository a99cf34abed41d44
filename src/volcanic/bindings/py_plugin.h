// A scheduler plugin written in Python (docs/plugins-python.md) as an engine
// Plugin: the bridge between a volcanic.Plugin subclass and the session.
//
// Promises: the session gets a callback only for the hooks the Python class
// defines and the instance did not set to None (a hook it lacks costs
// nothing), registered under the plugin's
// name so the tiers' combination rules and enable flags apply as to native
// plugins. Each call takes the GIL (sessions run without it) and passes
// views (views.h). A Python exception, or an answer of the wrong type, fails
// the session (Session::Fail, a PluginError naming the plugin and the hook,
// with the traceback); the failing call then answers neutrally and no Python
// plugin is called again in that session.
// Cost: per call, the GIL hand-over and one vectorcall; views are made once
// per object and session.
#pragma once

#include <pybind11/pybind11.h>

#include <bitset>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "volcanic/framework/extension_points.h"
#include "volcanic/framework/registry.h"

namespace volcanic::bindings {

namespace py = pybind11;

// A Python plugin's hooks: the extension points marked `python` in
// extension_points.h, numbered as their HookKind.
using Hook = int;
inline constexpr int kHookCount = static_cast<int>(kHookKinds);
#define VOLCANIC_PY_HOOK(Name, field, Fn, flag, combination, python) \
  inline constexpr Hook k##Name = static_cast<Hook>(HookKind::k##Name);
VOLCANIC_EXTENSION_POINTS(VOLCANIC_PY_HOOK)
#undef VOLCANIC_PY_HOOK
inline constexpr Hook kOnSessionOpen = static_cast<Hook>(HookKind::kOnSessionOpen);
inline constexpr Hook kOnSessionClose = static_cast<Hook>(HookKind::kOnSessionClose);
// The Python method name, e.g. "job_order".
inline const char* HookName(Hook hook) { return HookKindName(static_cast<HookKind>(hook)); }
// The hook a Python plugin may define under `name`, if any.
std::optional<Hook> HookByName(std::string_view name);
// The names of the hooks a Python plugin may define, in the table's order.
std::vector<std::string> PythonHookNames();

// Holds the GIL for its lifetime (re-entrant: fine when already held).
class Gil {
 public:
  Gil() : state_(PyGILState_Ensure()) {}
  ~Gil() { PyGILState_Release(state_); }
  Gil(const Gil&) = delete;
  Gil& operator=(const Gil&) = delete;

 private:
  PyGILState_STATE state_;
};

// What registration learned about a Python plugin class; shared by the
// registry's factory and the plugins it builds. Drops the class with the GIL.
struct PyPluginClass {
  std::string name;
  py::object cls;
  std::bitset<kHookCount> hooks;
  bool node_local = false;
  ~PyPluginClass();
};

// One plugin for one session: instantiates cls(arguments) with the GIL. A
// ValueError from __init__ (ConfigError included) is a ConfigError
// "plugin <name>: <message>"; any other exception a PluginError.
absl::StatusOr<std::unique_ptr<Plugin>> BuildPyPlugin(const std::shared_ptr<const PyPluginClass>& cls,
                                                      const Arguments& args);

// Adds the Python plugin class `cls` to `registry` under `name`, with the
// hooks (Python method names) it defines. Raises ConfigError for a name the
// registry has (a built-in's) or an unknown hook.
void AddPyPlugin(Registry& registry, const std::string& name, py::object cls, const std::vector<std::string>& hooks,
                 bool node_local);

// A SystemExit or KeyboardInterrupt (a BaseException that is no Exception)
// raised by a plugin fails its session like any error, so the session is
// rolled back, and is then raised again to the caller of run_once instead of
// becoming a PluginError: KeepIfInterrupt keeps it, RaiseInterrupt (with the
// GIL, after the session) raises it. A session runs on the thread that called
// run_once, so the slot is per thread.
void KeepIfInterrupt(const py::error_already_set& e);
void RaiseInterrupt();

}  // namespace volcanic::bindings
