// volcanic._core's side of Python plugins: the view classes, the hook names,
// the built-in plugins' names, and AddPyPlugin, which puts a Python plugin
// class in a Scheduler's registry (python/volcanic/scheduler/plugins.py keeps
// the registered classes). The bridge itself is py_plugin.h.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "absl/strings/str_cat.h"
#include "volcanic/api/errors.h"
#include "volcanic/bindings/convert.h"
#include "volcanic/bindings/hook_budget.h"
#include "volcanic/bindings/py_plugin.h"
#include "volcanic/bindings/views.h"

namespace volcanic::bindings {

void AddPyPlugin(Registry& registry, const std::string& name, py::object cls, const std::vector<std::string>& hooks,
                 bool node_local) {
  auto info = std::make_shared<PyPluginClass>();
  info->name = name;
  info->cls = std::move(cls);
  info->node_local = node_local;
  for (const std::string& h : hooks) {
    auto hook = HookByName(h);
    if (!hook) Raise(ConfigError(absl::StrCat("plugin \"", name, "\": unknown hook \"", h, "\"")));
    info->hooks.set(*hook);
  }
  std::shared_ptr<const PyPluginClass> shared = std::move(info);
  Check(registry.AddPlugin(name, [shared](const Arguments& args) { return BuildPyPlugin(shared, args); }));
}

void BindPlugins(py::module_& m) {
  BindViews(m);
  BindHookBudget(m);
  m.attr("PLUGIN_HOOKS") = py::tuple(py::cast(PythonHookNames()));
  py::list points;  // (name, enable flag or None, whether Python may define it), as the table has them
  for (const ExtensionPoint& p : kExtensionPoints)
    points.append(py::make_tuple(p.name, p.enable_flag ? py::object(py::str(p.enable_flag)) : py::none(), p.python));
  m.attr("EXTENSION_POINTS") = py::tuple(points);
  m.def("builtin_plugin_names", [] { return Registry::Builtins().PluginNames(); });
}

}  // namespace volcanic::bindings
