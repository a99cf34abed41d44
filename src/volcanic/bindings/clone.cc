// A deep copy of JSON-shaped Python data for the embedded store, which keeps
// what is written apart from the writer's objects. Dicts and lists are new;
// str, int, float, bool and None are immutable and shared, which is what
// makes this several times faster than marshal's serialize-and-read-back.
#include <pybind11/pybind11.h>

namespace volcanic::bindings {
namespace {

namespace py = pybind11;

// Nesting beyond this goes to the caller's fallback (copy.deepcopy), as does
// any other type: the copy must stay exact, and recursion bounded.
constexpr int kMaxCloneDepth = 256;

bool Shared(PyObject* o) {
  return PyUnicode_CheckExact(o) || PyLong_CheckExact(o) || PyFloat_CheckExact(o) || PyBool_Check(o) ||
         o == Py_None;
}

// A new reference, or nullptr when `o` is not plain JSON-shaped data (no
// Python error is set then).
PyObject* Clone(PyObject* o, int depth) {
  if (Shared(o)) return Py_NewRef(o);
  if (depth > kMaxCloneDepth) return nullptr;
  if (PyDict_CheckExact(o)) {
    // A copy of the table shares the keys and the immutable values at once;
    // only nested dicts and lists are then replaced by their copies (a
    // replacement keeps the table's size, where inserting key by key grew it).
    PyObject* out = PyDict_Copy(o);
    if (out == nullptr) throw py::error_already_set();
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(o, &pos, &key, &value)) {
      if (!Shared(key)) {  // other keys: deepcopy's
        Py_DECREF(out);
        return nullptr;
      }
      if (Shared(value)) continue;
      PyObject* copy = Clone(value, depth + 1);
      if (copy == nullptr || PyDict_SetItem(out, key, copy) < 0) {
        Py_XDECREF(copy);
        Py_DECREF(out);
        if (PyErr_Occurred()) throw py::error_already_set();
        return nullptr;
      }
      Py_DECREF(copy);
    }
    return out;
  }
  if (PyList_CheckExact(o)) {
    Py_ssize_t n = PyList_GET_SIZE(o);
    PyObject* out = PyList_New(n);
    if (out == nullptr) throw py::error_already_set();
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* copy = Clone(PyList_GET_ITEM(o, i), depth + 1);
      if (copy == nullptr) {
        Py_DECREF(out);  // unset items are NULL, which the list's dealloc skips
        return nullptr;
      }
      PyList_SET_ITEM(out, i, copy);
    }
    return out;
  }
  return nullptr;
}

}  // namespace

void BindClone(py::module_& m) {
  m.def(
      "clone_json",
      [](const py::handle& obj) -> py::object {
        PyObject* copy = Clone(obj.ptr(), 0);
        if (copy == nullptr) throw py::type_error("not plain JSON-shaped data");
        return py::reinterpret_steal<py::object>(copy);
      },
      py::arg("obj"),
      "A deep copy of dicts and lists holding str, int, float, bool and None (shared, as they "
      "are immutable); TypeError for anything else or nesting deeper than 256.");
}

}  // namespace volcanic::bindings
