// volcanic._core: the native engine for Python. One file per area:
// bind_scheduler.cc (Scheduler, decisions, errors), bind_plugins.cc (Python
// plugins and their views), bind_kube.cc (quantities, durations, pod requests),
// clone.cc (deep copies for the embedded store), protobuf.cc (Kubernetes'
// protobuf wire form for the real-cluster client).
#include <pybind11/pybind11.h>

namespace py = pybind11;

namespace volcanic::bindings {
void BindScheduler(py::module_& m);
void BindPlugins(py::module_& m);
void BindKube(py::module_& m);
void BindClone(py::module_& m);
void BindProtobuf(py::module_& m);
}

PYBIND11_MODULE(_core, m) {
  m.doc() = "volcanic's native scheduling engine (private; use the volcanic package)";
  volcanic::bindings::BindScheduler(m);
  volcanic::bindings::BindPlugins(m);
  volcanic::bindings::BindKube(m);
  volcanic::bindings::BindClone(m);
  volcanic::bindings::BindProtobuf(m);
}
