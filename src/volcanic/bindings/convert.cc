#include "volcanic/bindings/convert.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/string_view.h"
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

// A str's UTF-8 bytes (the str's own, valid while it lives); one without (a
// lone surrogate, which JSON cannot carry) is a malformed object, named by `path`.
std::string_view Utf8(PyObject* str, const Path& path, const char* what) {
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(str, &size);
  if (data == nullptr) {
    PyErr_Clear();
    RaiseInvalid(path.Text() + ": " + what + " is not valid Unicode (a lone surrogate)");
  }
  return std::string_view(data, static_cast<size_t>(size));
}

void ConvertDict(PyObject* obj, nlohmann::json& out, const Path& path, int depth);

// Makes `out` the JSON of `obj`, reusing what `out` holds: the nodes of keys
// both have are kept and their values converted in place, strings keep their
// buffers. Objects read one after another mostly share their shape, so most of
// a conversion then allocates and frees nothing.
void Convert(PyObject* obj, nlohmann::json& out, const Path& path, int depth) {
  if (depth > kMaxDepth) RaiseInvalid(path.Text() + ": nested deeper than " + std::to_string(kMaxDepth) + " levels");
  if (PyUnicode_Check(obj)) {
    std::string_view text = Utf8(obj, path, "text");
    if (out.is_string()) {
      out.get_ref<std::string&>().assign(text);
    } else {
      out = std::string(text);
    }
  } else if (PyDict_Check(obj)) {
    ConvertDict(obj, out, path, depth);
  } else if (PyList_Check(obj) || PyTuple_Check(obj)) {
    if (!out.is_array()) out = nlohmann::json::array();
    auto& items = out.get_ref<nlohmann::json::array_t&>();
    Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
    items.resize(static_cast<size_t>(n));
    for (Py_ssize_t i = 0; i < n; ++i)
      Convert(PySequence_Fast_GET_ITEM(obj, i), items[static_cast<size_t>(i)], Path{&path, nullptr, i}, depth + 1);
  } else if (obj == Py_None) {
    out = nullptr;
  } else if (PyBool_Check(obj)) {
    out = obj == Py_True;
  } else if (PyLong_Check(obj)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (overflow != 0) RaiseInvalid(path.Text() + ": integer out of range");
    out = static_cast<int64_t>(v);
  } else if (PyFloat_Check(obj)) {
    out = PyFloat_AS_DOUBLE(obj);
  } else {
    RaiseInvalid(path.Text() + ": unsupported type " + std::string(Py_TYPE(obj)->tp_name));
  }
}

void ConvertDict(PyObject* obj, nlohmann::json& out, const Path& path, int depth) {
  if (!out.is_object()) out = nlohmann::json::object();
  auto& members = out.get_ref<nlohmann::json::object_t&>();
  absl::InlinedVector<const void*, 16> kept;  // the members `obj` has
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(obj, &pos, &key, &value)) {
    if (!PyUnicode_Check(key)) RaiseInvalid(path.Text() + ": keys must be strings");
    std::string_view name = Utf8(key, path, "a key");
    auto it = members.find(name);
    if (it == members.end()) it = members.emplace(std::string(name), nullptr).first;
    kept.push_back(&*it);
    Convert(value, it->second, Path{&path, key, 0}, depth + 1);
  }
  if (kept.size() == members.size()) return;
  std::sort(kept.begin(), kept.end());
  for (auto it = members.begin(); it != members.end();)
    it = std::binary_search(kept.begin(), kept.end(), static_cast<const void*>(&*it)) ? std::next(it)
                                                                                       : members.erase(it);
}

// This thread's tree for objects of `obj`'s kind: a Pod is converted over the
// last Pod, a PodGroup over the last PodGroup. Kinds past the first few share
// one tree, so objects of ever new kinds keep no tree each.
nlohmann::json& Scratch(PyObject* obj) {
  constexpr size_t kKindsKept = 16;  // the engine reads six
  thread_local absl::flat_hash_map<std::string, nlohmann::json> by_kind;
  PyObject* kind = PyDict_Check(obj) ? PyDict_GetItemString(obj, "kind") : nullptr;
  Py_ssize_t size = 0;
  const char* name = kind && PyUnicode_Check(kind) ? PyUnicode_AsUTF8AndSize(kind, &size) : nullptr;
  if (name == nullptr) PyErr_Clear();
  absl::string_view key = name ? absl::string_view(name, static_cast<size_t>(size)) : absl::string_view();
  if (auto it = by_kind.find(key); it != by_kind.end()) return it->second;
  return by_kind[by_kind.size() < kKindsKept ? key : absl::string_view()];
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

const nlohmann::json& ToJson(const py::handle& obj) {
  nlohmann::json& out = Scratch(obj.ptr());
  if (py::isinstance<py::str>(obj) || py::isinstance<py::bytes>(obj)) {
    std::string text = py::isinstance<py::str>(obj) ? std::string(Utf8(obj.ptr(), Path{nullptr, nullptr, 0}, "JSON text"))
                                                    : obj.cast<std::string>();
    nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) RaiseInvalid("object: not valid JSON text");
    if (Depth(j) > kMaxDepth) RaiseInvalid("object: nested deeper than " + std::to_string(kMaxDepth) + " levels");
    out = std::move(j);
    return out;
  }
  Convert(obj.ptr(), out, Path{nullptr, nullptr, 0}, 1);
  return out;
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
