// volcanic._core's side of Python plugins: the view classes, the hook names
// and register_plugin (python/volcanic/scheduler/plugins.py checks the class
// and calls it). The bridge itself is py_plugin.h.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "absl/strings/str_cat.h"
#include "volcanic/api/errors.h"
#include "volcanic/bindings/convert.h"
#include "volcanic/bindings/py_plugin.h"
#include "volcanic/bindings/views.h"

namespace volcanic::bindings {
namespace {

// Makes `name` usable in configurations at once: built-in names are refused
// (ConfigError), another Python plugin of the same name is replaced.
void RegisterPlugin(const std::string& name, py::object cls, const std::vector<std::string>& hooks,
                    bool node_local) {
  if (name.empty()) Raise(ConfigError("register_plugin: the plugin class needs a non-empty `name`"));
  if (Registry::Global().IsBuiltinPlugin(name))
    Raise(ConfigError(absl::StrCat("register_plugin: \"", name,
                                   "\" is the name of a built-in plugin; give the Python plugin another name")));
  auto info = std::make_shared<PyPluginClass>();
  info->name = name;
  info->cls = std::move(cls);
  info->node_local = node_local;
  for (const std::string& h : hooks) {
    auto hook = HookByName(h);
    if (!hook) Raise(ConfigError(absl::StrCat("register_plugin: unknown hook \"", h, "\"")));
    info->hooks.set(*hook);
  }
  std::shared_ptr<const PyPluginClass> shared = std::move(info);
  Registry::Global().AddPlugin(name, [shared](const Arguments& args) { return BuildPyPlugin(shared, args); });
}

}  // namespace

void BindPlugins(py::module_& m) {
  BindViews(m);
  std::vector<std::string> hooks;
  for (int h = 0; h < kHookCount; ++h) hooks.push_back(HookName(h));
  m.attr("PLUGIN_HOOKS") = py::tuple(py::cast(hooks));
  m.def("register_plugin", &RegisterPlugin, py::arg("name"), py::arg("cls"), py::arg("hooks"),
        py::arg("node_local") = false);
}

}  // namespace volcanic::bindings
