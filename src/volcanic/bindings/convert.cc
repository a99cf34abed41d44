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

// Where a value sits, as a chain of parents, so the text of a path is built
// only when there is an error to report.
struct Path {
  const Path* parent;
  std::string key;  // ".name" or "[3]"
  std::string Text() const {
    std::string prefix = parent ? parent->Text() : "";
    std::string out = prefix + key;
    return out.empty() ? "object" : (out[0] == '.' ? out.substr(1) : out);
  }
};

// A str's UTF-8 bytes; one without (a lone surrogate, which JSON cannot carry)
// is a malformed object, named by `path`.
std::string Utf8(const py::handle& str, const Path& path, const char* what) {
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(str.ptr(), &size);
  if (data == nullptr) {
    PyErr_Clear();
    RaiseInvalid(path.Text() + ": " + what + " is not valid Unicode (a lone surrogate)");
  }
  return std::string(data, static_cast<size_t>(size));
}

nlohmann::json Convert(const py::handle& obj, const Path& path, int depth) {
  if (depth > kMaxDepth) RaiseInvalid(path.Text() + ": nested deeper than " + std::to_string(kMaxDepth) + " levels");
  if (obj.is_none()) return nullptr;
  if (py::isinstance<py::bool_>(obj)) return obj.cast<bool>();
  if (py::isinstance<py::int_>(obj)) {
    try {
      return obj.cast<int64_t>();
    } catch (const py::cast_error&) {
      RaiseInvalid(path.Text() + ": integer out of range");
    }
  }
  if (py::isinstance<py::float_>(obj)) return obj.cast<double>();
  if (py::isinstance<py::str>(obj)) return Utf8(obj, path, "text");
  if (py::isinstance<py::dict>(obj)) {
    nlohmann::json out = nlohmann::json::object();
    for (auto item : obj.cast<py::dict>()) {
      if (!py::isinstance<py::str>(item.first)) RaiseInvalid(path.Text() + ": keys must be strings");
      std::string key = Utf8(item.first, path, "a key");
      out[key] = Convert(item.second, Path{&path, "." + key}, depth + 1);
    }
    return out;
  }
  if (py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj)) {
    nlohmann::json out = nlohmann::json::array();
    size_t i = 0;
    for (auto item : obj) out.push_back(Convert(item, Path{&path, "[" + std::to_string(i++) + "]"}, depth + 1));
    return out;
  }
  RaiseInvalid(path.Text() + ": unsupported type " + std::string(py::str(obj.get_type().attr("__name__"))));
}

// Depth of a parsed JSON value, without recursion.
int Depth(const nlohmann::json& j) {
  std::vector<std::pair<const nlohmann::json*, int>> todo = {{&j, 1}};
  int max = 0;
  while (!todo.empty()) {
    auto [v, d] = todo.back();
    todo.pop_back();
    max = std::max(max, d);
    if (max > kMaxDepth) return max;
    if (v->is_structured())
      for (const auto& child : *v) todo.emplace_back(&child, d + 1);
  }
  return max;
}

}  // namespace

nlohmann::json ToJson(const py::handle& obj) {
  if (py::isinstance<py::str>(obj) || py::isinstance<py::bytes>(obj)) {
    std::string text = py::isinstance<py::str>(obj) ? Utf8(obj, Path{nullptr, ""}, "JSON text") : obj.cast<std::string>();
    nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) RaiseInvalid("object: not valid JSON text");
    if (Depth(j) > kMaxDepth) RaiseInvalid("object: nested deeper than " + std::to_string(kMaxDepth) + " levels");
    return j;
  }
  return Convert(obj, Path{nullptr, ""}, 1);
}

void Raise(const absl::Status& status) {
  if (IsPluginError(status)) {
    py::object type = py::module_::import("volcanic.errors").attr("PluginError");
    py::object error = type(std::string(status.message()), PluginOf(status));
    PyErr_SetObject(type.ptr(), error.ptr());
    throw py::error_already_set();
  }
  const char* cls = IsObjectError(status) ? "InvalidObject" : IsConfigError(status) ? "ConfigError" : nullptr;
  std::string message(status.message());
  if (!cls) throw std::runtime_error(message);
  py::object type = py::module_::import("volcanic.errors").attr(cls);
  PyErr_SetString(type.ptr(), message.c_str());
  throw py::error_already_set();
}

}  // namespace volcanic::bindings
