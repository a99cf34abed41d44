// ResourceView and LabelsView: read-only mappings over a Resource and over
// labels/annotations, registered as collections.abc.Mapping.
//
// ResourceView reads like collections.Counter: r["cpu"] is the amount in
// engine units (cpu millicores, memory-like resources bytes, others
// milli-units), 0 for a resource it does not have (math.inf for a dimension
// a limit leaves unbounded); keys() lists the non-zero, finite ones, and
// get(name, default) returns the default for the others. `cpu` and `memory`
// are also attributes.
#include <cmath>
#include <limits>
#include <vector>

#include "volcanic/bindings/view_types.h"

namespace volcanic::bindings::view_types {
namespace {

PyTypeObject* g_resource_type = nullptr;
PyTypeObject* g_labels_type = nullptr;

// The resource id of a str key; -1 for a name never seen, -2 for a non-str.
// cpu and memory without a lookup; never interns (asking must not grow the table).
ResourceId IdOf(PyObject* key) {
  if (!PyUnicode_Check(key)) return -2;
  Py_ssize_t len = 0;
  const char* s = PyUnicode_AsUTF8AndSize(key, &len);
  if (!s) throw py::error_already_set();
  absl::string_view name(s, static_cast<size_t>(len));
  if (name == "cpu") return kCpu;
  if (name == "memory") return kMemory;
  return ResourceNames::Find(name);
}

PyObject* Amount(int64_t v) {
  if (v >= Resource::kInfinite) return PyFloat_FromDouble(std::numeric_limits<double>::infinity());
  return PyLong_FromLongLong(v);
}

bool Listed(int64_t v) { return v != 0 && v < Resource::kInfinite; }
bool Listed(const Resource& r, ResourceId id) { return id >= 0 && id < r.Size() && Listed(r.Get(id)); }

py::dict ResourceDict(const ResourceView& v) {
  py::dict out;
  for (int i = 0; i < v.r->Size(); ++i)
    if (Listed(v.r->Get(i))) out[py::str(ResourceNames::Name(i))] = Steal(Amount(v.r->Get(i)));
  return out;
}

py::dict LabelsDict(const LabelsView& v) {
  py::dict out;
  for (const auto& [k, val] : *v.m) out[py::str(k)] = py::str(val);
  return out;
}

const std::string* LabelFind(const LabelsView& v, PyObject* key) {
  if (!PyUnicode_Check(key)) return nullptr;
  Py_ssize_t len = 0;
  const char* s = PyUnicode_AsUTF8AndSize(key, &len);
  if (!s) throw py::error_already_set();
  auto it = v.m->find(std::string(s, static_cast<size_t>(len)));
  return it == v.m->end() ? nullptr : &it->second;
}

// The generic mapping slots over a payload T with a Dict(T) snapshot.
template <typename T, py::dict (*Dict)(const T&)>
struct MappingSlots {
  static PyObject* Iter(PyObject* self) {
    T& v = Of<T>(self);
    if (Closed(v.scope)) return nullptr;
    return Guarded([&] { return Own(py::iter(Dict(v))); });
  }
  static PyObject* Call(PyObject* self, const char* method) {
    T& v = Of<T>(self);
    if (Closed(v.scope)) return nullptr;
    return Guarded([&] { return Own(Dict(v).attr(method)()); });
  }
  static PyObject* Keys(PyObject* self, PyObject*) { return Call(self, "keys"); }
  static PyObject* Items(PyObject* self, PyObject*) { return Call(self, "items"); }
  static PyObject* Values(PyObject* self, PyObject*) { return Call(self, "values"); }
  static PyObject* Compare(PyObject* self, PyObject* other, int op) {
    if (op != Py_EQ && op != Py_NE) Py_RETURN_NOTIMPLEMENTED;
    T& v = Of<T>(self);
    if (Closed(v.scope)) return nullptr;
    return Guarded([&] {
      py::object mine = Dict(v);
      py::object theirs = py::reinterpret_borrow<py::object>(other);
      if (Py_TYPE(other) == Py_TYPE(self)) theirs = Dict(Of<T>(other));
      py::object mapping = py::module_::import("collections.abc").attr("Mapping");
      if (!PyDict_Check(theirs.ptr()) && !py::isinstance(theirs, mapping)) return Py_NewRef(Py_NotImplemented);
      bool eq = mine.equal(py::dict(theirs));
      return Bool(op == Py_EQ ? eq : !eq);
    });
  }
  static PyObject* Repr(PyObject* self, const char* name) {
    T& v = Of<T>(self);
    if (!v.scope->open) return PyUnicode_FromFormat("<%s of an ended session>", name);
    return Guarded([&] {
      std::string text = py::repr(Dict(v)).template cast<std::string>();
      return PyUnicode_FromFormat("%s(%s)", name, text.c_str());
    });
  }
};

using ResourceSlots = MappingSlots<ResourceView, &ResourceDict>;
using LabelsSlots = MappingSlots<LabelsView, &LabelsDict>;
PyObject* ResourceRepr(PyObject* self) { return ResourceSlots::Repr(self, "ResourceView"); }
PyObject* LabelsRepr(PyObject* self) { return LabelsSlots::Repr(self, "LabelsView"); }

PyObject* ResourceGetItem(PyObject* self, PyObject* key) {
  ResourceView& v = Of<ResourceView>(self);
  if (Closed(v.scope)) return nullptr;
  return Guarded([&]() -> PyObject* {
    ResourceId id = IdOf(key);
    if (id == -2) {
      PyErr_SetObject(PyExc_KeyError, key);
      return nullptr;
    }
    return Amount(id < 0 ? v.r->fill() : v.r->Get(id));
  });
}

Py_ssize_t ResourceLength(PyObject* self) {
  ResourceView& v = Of<ResourceView>(self);
  if (Closed(v.scope)) return -1;
  Py_ssize_t n = 0;
  for (int i = 0; i < v.r->Size(); ++i) n += Listed(v.r->Get(i)) ? 1 : 0;
  return n;
}

int ResourceContains(PyObject* self, PyObject* key) {
  ResourceView& v = Of<ResourceView>(self);
  if (Closed(v.scope)) return -1;
  try {
    return Listed(*v.r, IdOf(key)) ? 1 : 0;
  } catch (py::error_already_set& e) {
    e.restore();
    return -1;
  }
}

PyObject* ResourceGet(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs < 1 || nargs > 2) {
    PyErr_SetString(PyExc_TypeError, "get() takes a resource name and an optional default");
    return nullptr;
  }
  ResourceView& v = Of<ResourceView>(self);
  if (Closed(v.scope)) return nullptr;
  return Guarded([&] {
    ResourceId id = IdOf(args[0]);
    if (!Listed(*v.r, id)) return Py_NewRef(nargs > 1 ? args[1] : Py_None);
    return Amount(v.r->Get(id));
  });
}

PyObject* LabelsGetItem(PyObject* self, PyObject* key) {
  LabelsView& v = Of<LabelsView>(self);
  if (Closed(v.scope)) return nullptr;
  return Guarded([&]() -> PyObject* {
    const std::string* s = LabelFind(v, key);
    if (!s) {
      PyErr_SetObject(PyExc_KeyError, key);
      return nullptr;
    }
    return Str(*s);
  });
}

Py_ssize_t LabelsLength(PyObject* self) {
  LabelsView& v = Of<LabelsView>(self);
  if (Closed(v.scope)) return -1;
  return static_cast<Py_ssize_t>(v.m->size());
}

int LabelsContains(PyObject* self, PyObject* key) {
  LabelsView& v = Of<LabelsView>(self);
  if (Closed(v.scope)) return -1;
  try {
    return LabelFind(v, key) ? 1 : 0;
  } catch (py::error_already_set& e) {
    e.restore();
    return -1;
  }
}

PyObject* LabelsGet(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs < 1 || nargs > 2) {
    PyErr_SetString(PyExc_TypeError, "get() takes a key and an optional default");
    return nullptr;
  }
  LabelsView& v = Of<LabelsView>(self);
  if (Closed(v.scope)) return nullptr;
  return Guarded([&] {
    const std::string* s = LabelFind(v, args[0]);
    return s ? Str(*s) : Py_NewRef(nargs > 1 ? args[1] : Py_None);
  });
}

PyGetSetDef kResourceGetSet[] = {
    Prop<ResourceView>("cpu", [](ResourceView& v) { return Amount(v.r->Get(kCpu)); }, "cpu in millicores"),
    Prop<ResourceView>("memory", [](ResourceView& v) { return Amount(v.r->Get(kMemory)); }, "memory in bytes"),
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyMethodDef kResourceMethods[] = {
    {"get", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&ResourceGet)), METH_FASTCALL,
     "get(name, default=None): the amount, or default when the resource is absent"},
    {"keys", &ResourceSlots::Keys, METH_NOARGS, nullptr},
    {"items", &ResourceSlots::Items, METH_NOARGS, nullptr},
    {"values", &ResourceSlots::Values, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr}};

PyMethodDef kLabelsMethods[] = {
    {"get", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&LabelsGet)), METH_FASTCALL,
     "get(key, default=None)"},
    {"keys", &LabelsSlots::Keys, METH_NOARGS, nullptr},
    {"items", &LabelsSlots::Items, METH_NOARGS, nullptr},
    {"values", &LabelsSlots::Values, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr}};

const char kResourceDoc[] =
    "Read-only resource amounts, name -> int in engine units: cpu in millicores, memory-like resources in "
    "bytes, others in milli-units (1 GPU reads 1000). Like collections.Counter, a missing name reads 0 "
    "(math.inf for a dimension a limit leaves unbounded) and get() returns the default for it. Valid while "
    "its session runs.";

}  // namespace

PyObject* NewResourceView(const Resource* r, const ScopeRef& scope, std::shared_ptr<const Resource> owned) {
  return Make(g_resource_type, ResourceView{r, scope, std::move(owned)});
}

PyObject* NewLabelsView(const Labels* m, const ScopeRef& scope) { return Make(g_labels_type, LabelsView{m, scope}); }

void BindMappings(py::module_& m) {
  PyType_Slot resource_slots[] = {
      {Py_tp_dealloc, reinterpret_cast<void*>(&Dealloc<ResourceView>)},
      {Py_mp_subscript, reinterpret_cast<void*>(&ResourceGetItem)},
      {Py_mp_length, reinterpret_cast<void*>(&ResourceLength)},
      {Py_sq_contains, reinterpret_cast<void*>(&ResourceContains)},
      {Py_tp_iter, reinterpret_cast<void*>(&ResourceSlots::Iter)},
      {Py_tp_richcompare, reinterpret_cast<void*>(&ResourceSlots::Compare)},
      {Py_tp_hash, reinterpret_cast<void*>(&PyObject_HashNotImplemented)},
      {Py_tp_repr, reinterpret_cast<void*>(&ResourceRepr)},
      {Py_tp_getset, kResourceGetSet},
      {Py_tp_methods, kResourceMethods},
      {Py_tp_doc, const_cast<char*>(kResourceDoc)},
      {0, nullptr}};
  g_resource_type =
      NewType(m, "ResourceView", "volcanic._core.ResourceView", resource_slots, sizeof(Box<ResourceView>));
  PyType_Slot labels_slots[] = {
      {Py_tp_dealloc, reinterpret_cast<void*>(&Dealloc<LabelsView>)},
      {Py_mp_subscript, reinterpret_cast<void*>(&LabelsGetItem)},
      {Py_mp_length, reinterpret_cast<void*>(&LabelsLength)},
      {Py_sq_contains, reinterpret_cast<void*>(&LabelsContains)},
      {Py_tp_iter, reinterpret_cast<void*>(&LabelsSlots::Iter)},
      {Py_tp_richcompare, reinterpret_cast<void*>(&LabelsSlots::Compare)},
      {Py_tp_hash, reinterpret_cast<void*>(&PyObject_HashNotImplemented)},
      {Py_tp_repr, reinterpret_cast<void*>(&LabelsRepr)},
      {Py_tp_methods, kLabelsMethods},
      {Py_tp_doc, const_cast<char*>("Read-only labels or annotations, str -> str. Valid while its session runs.")},
      {0, nullptr}};
  g_labels_type = NewType(m, "LabelsView", "volcanic._core.LabelsView", labels_slots, sizeof(Box<LabelsView>));
  py::object mapping = py::module_::import("collections.abc").attr("Mapping");
  mapping.attr("register")(m.attr("ResourceView"));
  mapping.attr("register")(m.attr("LabelsView"));
}

}  // namespace volcanic::bindings::view_types
