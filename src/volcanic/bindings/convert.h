// Python objects -> nlohmann::json, and absl::Status -> Python exceptions.
#pragma once

#include <pybind11/pybind11.h>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"

namespace volcanic::bindings {

namespace py = pybind11;

// Deeper objects are refused: no Kubernetes object nests anywhere near this,
// and recursion on hostile input must not exhaust the stack.
inline constexpr int kMaxDepth = 64;

// A dict/list/tuple/str/int/float/bool/None tree as JSON, or JSON text or
// bytes. Anything else, or nesting deeper than kMaxDepth, raises
// volcanic.InvalidObject naming the path. The result is this thread's tree for
// the object's kind, valid until the next call: converted over the last object
// of the kind, it reuses the nodes both have (a pod's upsert then allocates
// next to nothing), so read it before converting another, and copy what is kept.
const nlohmann::json& ToJson(const py::handle& obj);

// Whether the interpreter can still be called into: initialized and not
// finalizing (CPython 3.13 made _Py_IsFinalizing public as Py_IsFinalizing).
inline bool InterpreterAlive() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsInitialized() && !Py_IsFinalizing();
#else
  return Py_IsInitialized() && !_Py_IsFinalizing();
#endif
}

// Raises volcanic.InvalidObject, volcanic.ConfigError or volcanic.PluginError
// (by status code), or RuntimeError for anything else.
[[noreturn]] void Raise(const absl::Status& status);
inline void Check(const absl::Status& status) {
  if (!status.ok()) Raise(status);
}

}  // namespace volcanic::bindings
