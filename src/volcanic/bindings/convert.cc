#include "volcanic/bindings/convert.h"

#include <string>

#include "volcanic/api/errors.h"

namespace volcanic::bindings {
namespace {

[[noreturn]] void RaiseInvalid(const std::string& message) {
  py::object cls = py::module_::import("volcanic.errors").attr("InvalidObject");
  PyErr_SetString(cls.ptr(), message.c_str());
  throw py::error_already_set();
}

nlohmann::json Convert(const py::handle& obj, const std::string& path) {
  if (obj.is_none()) return nullptr;
  if (py::isinstance<py::bool_>(obj)) return obj.cast<bool>();
  if (py::isinstance<py::int_>(obj)) {
    try {
      return obj.cast<int64_t>();
    } catch (const py::cast_error&) {
      RaiseInvalid(path + ": integer out of range");
    }
  }
  if (py::isinstance<py::float_>(obj)) return obj.cast<double>();
  if (py::isinstance<py::str>(obj)) return obj.cast<std::string>();
  if (py::isinstance<py::dict>(obj)) {
    nlohmann::json out = nlohmann::json::object();
    for (auto item : obj.cast<py::dict>()) {
      if (!py::isinstance<py::str>(item.first)) RaiseInvalid(path + ": keys must be strings");
      std::string key = item.first.cast<std::string>();
      out[key] = Convert(item.second, path.empty() ? key : path + "." + key);
    }
    return out;
  }
  if (py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj)) {
    nlohmann::json out = nlohmann::json::array();
    size_t i = 0;
    for (auto item : obj) out.push_back(Convert(item, path + "[" + std::to_string(i++) + "]"));
    return out;
  }
  RaiseInvalid((path.empty() ? std::string("object") : path) + ": unsupported type " +
               std::string(py::str(obj.get_type().attr("__name__"))));
}

}  // namespace

nlohmann::json ToJson(const py::handle& obj) {
  if (py::isinstance<py::str>(obj) || py::isinstance<py::bytes>(obj)) {
    std::string text = obj.cast<std::string>();
    nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) RaiseInvalid("object: not valid JSON text");
    return j;
  }
  return Convert(obj, "");
}

py::object FromJson(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null:
      return py::none();
    case nlohmann::json::value_t::boolean:
      return py::bool_(j.get<bool>());
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
      return py::int_(j.get<int64_t>());
    case nlohmann::json::value_t::number_float:
      return py::float_(j.get<double>());
    case nlohmann::json::value_t::string:
      return py::str(j.get<std::string>());
    case nlohmann::json::value_t::array: {
      py::list out;
      for (const auto& v : j) out.append(FromJson(v));
      return out;
    }
    default: {
      py::dict out;
      for (const auto& [k, v] : j.items()) out[py::str(k)] = FromJson(v);
      return out;
    }
  }
}

void Raise(const absl::Status& status) {
  const char* cls = IsObjectError(status) ? "InvalidObject" : IsConfigError(status) ? "ConfigError" : nullptr;
  std::string message(status.message());
  if (!cls) throw std::runtime_error(message);
  py::object type = py::module_::import("volcanic.errors").attr(cls);
  PyErr_SetString(type.ptr(), message.c_str());
  throw py::error_already_set();
}

}  // namespace volcanic::bindings
