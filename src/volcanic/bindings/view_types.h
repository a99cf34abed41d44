// The machinery under the view classes (views.h): plain CPython heap types
// whose instances hold a C++ payload. Attribute access goes through
// tp_getset and lookups through mp_subscript, with none of pybind11's
// per-call dispatch: a plugin reads a view field in a few tens of
// nanoseconds, which is what makes Python plugins on the hot path possible.
// Internal to the bindings; everything here needs the GIL.
#pragma once

#include <pybind11/pybind11.h>

#include <new>
#include <stdexcept>
#include <string>
#include <utility>

#include "volcanic/bindings/views.h"

namespace volcanic::bindings::view_types {

template <typename T>
struct Box {
  PyObject_HEAD T v;
};

template <typename T>
T& Of(PyObject* self) {
  return reinterpret_cast<Box<T>*>(self)->v;
}

// A new instance of `type` holding `payload`.
template <typename T>
PyObject* Make(PyTypeObject* type, T payload) {
  Box<T>* obj = PyObject_New(Box<T>, type);
  if (!obj) throw py::error_already_set();
  new (&obj->v) T(std::move(payload));
  return reinterpret_cast<PyObject*>(obj);
}

template <typename T>
void Dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  Of<T>(self).~T();
  PyObject_Free(self);
  Py_DECREF(type);  // instances of heap types own a reference to their type
}

// Runs `f` (returning a new reference) and turns C++ exceptions into Python ones.
template <typename F>
PyObject* Guarded(F&& f) {
  try {
    return f();
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

// Sets RuntimeError and returns true when the view's session has ended.
bool Closed(const ScopeRef& scope);

template <typename T>
using GetFn = PyObject* (*)(T&);

template <typename T>
PyObject* Get(PyObject* self, void* closure) {
  T& v = Of<T>(self);
  if (Closed(v.scope)) return nullptr;
  return Guarded([&] { return reinterpret_cast<GetFn<T>>(closure)(v); });
}

// A read-only attribute computed by `fn` (after the session check).
template <typename T>
PyGetSetDef Prop(const char* name, GetFn<T> fn, const char* doc = nullptr) {
  return {name, &Get<T>, nullptr, doc, reinterpret_cast<void*>(fn)};
}

// New references from engine values.
inline PyObject* Str(const std::string& s) {
  return PyUnicode_FromStringAndSize(s.data(), static_cast<Py_ssize_t>(s.size()));
}
inline PyObject* StrOrNone(const std::string& s) { return s.empty() ? Py_NewRef(Py_None) : Str(s); }
inline PyObject* Int(int64_t v) { return PyLong_FromLongLong(v); }
inline PyObject* Bool(bool b) { return PyBool_FromLong(b); }
inline PyObject* Float(double d) { return PyFloat_FromDouble(d); }
inline PyObject* Own(py::object o) { return o.release().ptr(); }
// A new reference as an object; a null one (a Python error) throws.
inline py::object Steal(PyObject* p) {
  if (!p) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(p);
}

// A cached member view, made on first use; a new reference.
template <typename Make>
PyObject* Lazy(py::object& slot, Make make) {
  if (!slot) slot = make();
  return Py_NewRef(slot.ptr());
}

// Makes a heap type from its slots (flags: immutable, not instantiable from
// Python, not subclassable) and sets it on the module.
PyTypeObject* NewType(py::module_& m, const char* name, const char* qualified, PyType_Slot* slots, size_t size);

// The mapping types (view_mappings.cc).
PyObject* NewResourceView(const Resource* r, const ScopeRef& scope, std::shared_ptr<const Resource> owned = nullptr);
PyObject* NewLabelsView(const Labels* m, const ScopeRef& scope);
void BindMappings(py::module_& m);

}  // namespace volcanic::bindings::view_types
