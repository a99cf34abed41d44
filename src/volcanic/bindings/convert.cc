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

// Where a value sits, as a chain of parents on the stack: the text of a path
// is built only when there is an error to report, so converting costs no
// string per value (a pod has hundreds).
struct Path {
  const Path* parent;
  PyObject* key;    // a str key of a dict, or nullptr for an item of a list
  Py_ssize_t index;  // the item's index when key is nullptr
  std::string Text() const {
    std::string out;
    for (const Path* p = this; p->parent != nullptr; p = p->parent) {
      const char* key = p->key ? PyUnicode_AsUTF8(p->key) : nullptr;
      if (p->key && key == nullptr) PyErr_Clear();
      out = (p->key ? "." + std::string(key ? key : "?") : "[" + std::to_string(p->index) + "]") + out;
    }
    return out.empty() ? "object" : (out[0] == '.' ? out.substr(1) : out);
  }
};

// A str's UTF-8 bytes; one without (a lone surrogate, which JSON cannot carry)
// is a malformed object, named by `path`.
std::string Utf8(PyObject* str, const Path& path, const char* what) {
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(str, &size);
  if (data == nullptr) {
    PyErr_Clear();
    RaiseInvalid(path.Text() + ": " + what + " is not valid Unicode (a lone surrogate)");
  }
  return std::string(data, static_cast<size_t>(size));
}

nlohmann::json Convert(PyObject* obj, const Path& path, int depth) {
  if (depth > kMaxDepth) RaiseInvalid(path.Text() + ": nested deeper than " + std::to_string(kMaxDepth) + " levels");
  if (PyUnicode_Check(obj)) return Utf8(obj, path, "text");
  if (PyDict_Check(obj)) {
    nlohmann::json out(nlohmann::json::value_t::object);
    auto& members = out.get_ref<nlohmann::json::object_t&>();
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(obj, &pos, &key, &value)) {
      if (!PyUnicode_Check(key)) RaiseInvalid(path.Text() + ": keys must be strings");
      Path at{&path, key, 0};
      members.insert_or_assign(Utf8(key, path, "a key"), Convert(value, at, depth + 1));
    }
    return out;
  }
  if (PyList_Check(obj) || PyTuple_Check(obj)) {
    nlohmann::json out(nlohmann::json::value_t::array);
    auto& items = out.get_ref<nlohmann::json::array_t&>();
    Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
    items.reserve(static_cast<size_t>(n));
    for (Py_ssize_t i = 0; i < n; ++i)
      items.push_back(Convert(PySequence_Fast_GET_ITEM(obj, i), Path{&path, nullptr, i}, depth + 1));
    return out;
  }
  if (obj == Py_None) return nullptr;
  if (PyBool_Check(obj)) return obj == Py_True;
  if (PyLong_Check(obj)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (overflow != 0) RaiseInvalid(path.Text() + ": integer out of range");
    return static_cast<int64_t>(v);
  }
  if (PyFloat_Check(obj)) return PyFloat_AS_DOUBLE(obj);
  RaiseInvalid(path.Text() + ": unsupported type " + std::string(Py_TYPE(obj)->tp_name));
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
    std::string text = py::isinstance<py::str>(obj) ? Utf8(obj.ptr(), Path{nullptr, nullptr, 0}, "JSON text") : obj.cast<std::string>();
    nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) RaiseInvalid("object: not valid JSON text");
    if (Depth(j) > kMaxDepth) RaiseInvalid("object: nested deeper than " + std::to_string(kMaxDepth) + " levels");
    return j;
  }
  return Convert(obj.ptr(), Path{nullptr, nullptr, 0}, 1);
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
