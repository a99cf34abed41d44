// Python objects <-> nlohmann::json, and absl::Status -> Python exceptions.
#pragma once

#include <pybind11/pybind11.h>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"

namespace volcanic::bindings {

namespace py = pybind11;

// A dict/list/str/int/float/bool/None tree as JSON; anything else raises
// volcanic.InvalidObject naming the path. Also accepts JSON text or bytes.
nlohmann::json ToJson(const py::handle& obj);
py::object FromJson(const nlohmann::json& j);

// Raises volcanic.InvalidObject or volcanic.ConfigError (by status code), or
// RuntimeError for anything else.
[[noreturn]] void Raise(const absl::Status& status);
inline void Check(const absl::Status& status) {
  if (!status.ok()) Raise(status);
}

}  // namespace volcanic::bindings
