// TaskView, NodeView, JobView, QueueView and SessionView (views.h) as plain
// CPython types (view_types.h), and the per-session ViewCache.
#include "volcanic/bindings/views.h"

#include <cmath>
#include <functional>
#include <vector>

#include "volcanic/bindings/view_types.h"
#include "volcanic/framework/session.h"

namespace volcanic::bindings {

using namespace view_types;  // NOLINT: this file implements them

namespace {

PyTypeObject* g_task_type = nullptr;
PyTypeObject* g_node_type = nullptr;
PyTypeObject* g_job_type = nullptr;
PyTypeObject* g_queue_type = nullptr;
PyTypeObject* g_session_type = nullptr;

const char kClosedMessage[] =
    "volcanic view used after its session ended: views are valid only while the session that passed them runs";

// Equality and hashing by the engine object, so two plugins' views of one
// object compare equal; identity holds within one plugin's session anyway.
const void* Target(const TaskView& v) { return v.t; }
const void* Target(const NodeView& v) { return v.n; }
const void* Target(const JobView& v) { return v.j; }
const void* Target(const QueueView& v) { return v.q; }

template <typename T>
PyObject* Compare(PyObject* self, PyObject* other, int op) {
  if ((op != Py_EQ && op != Py_NE) || Py_TYPE(other) != Py_TYPE(self)) Py_RETURN_NOTIMPLEMENTED;
  bool eq = Target(Of<T>(self)) == Target(Of<T>(other));
  return Bool(op == Py_EQ ? eq : !eq);
}

template <typename T>
Py_hash_t Hash(PyObject* self) {
  Py_hash_t h = static_cast<Py_hash_t>(std::hash<const void*>()(Target(Of<T>(self))));
  return h == -1 ? -2 : h;
}

std::string Describe(const TaskView& v) { return v.t->key + " " + StatusName(v.t->status); }
std::string Describe(const NodeView& v) { return v.n->name; }
std::string Describe(const JobView& v) { return v.j->key; }
std::string Describe(const QueueView& v) { return v.q->name; }
std::string Describe(const SessionView& v) { return v.s->uid(); }

template <typename T>
PyObject* Repr(PyObject* self) {
  T& v = Of<T>(self);
  const char* type = Py_TYPE(self)->tp_name;
  if (!v.scope->open) return PyUnicode_FromFormat("<%s of an ended session>", type);
  return Guarded([&] { return PyUnicode_FromFormat("<%s %s>", type, Describe(v).c_str()); });
}

// Lazily made member views.
PyObject* LazyResource(py::object& slot, const Resource* r, const ScopeRef& scope) {
  return Lazy(slot, [&] { return Steal(NewResourceView(r, scope)); });
}
PyObject* LazyLabels(py::object& slot, const Labels* m, const ScopeRef& scope) {
  return Lazy(slot, [&] { return Steal(NewLabelsView(m, scope)); });
}

PyObject* TaskList(ViewCache* cache, const absl::btree_map<std::string, TaskInfo*>& tasks) {
  std::vector<const TaskInfo*> list;
  list.reserve(tasks.size());
  for (const auto& [key, t] : tasks) list.push_back(t);
  return Own(cache->TaskList(list.data(), list.size()));
}

PyObject* Taints(const NodeInfo& n) {
  py::list out;
  for (const Taint& t : n.taints) {
    py::dict d;
    d["key"] = t.key;
    d["value"] = t.value;
    d["effect"] = t.effect;
    out.append(d);
  }
  return Own(out);
}

PyGetSetDef kTaskGetSet[] = {
    Prop<TaskView>("name", [](TaskView& v) { return Str(v.t->name); }),
    Prop<TaskView>("namespace", [](TaskView& v) { return Str(v.t->ns); }),
    Prop<TaskView>("key", [](TaskView& v) { return Str(v.t->key); }, "\"namespace/name\""),
    Prop<TaskView>("uid", [](TaskView& v) { return Str(v.t->uid); }),
    Prop<TaskView>("role", [](TaskView& v) { return Str(v.t->role); }, "annotation volcano.sh/task-spec"),
    Prop<TaskView>("job", [](TaskView& v) { return Own(v.cache->Job(v.t->job)); }),
    Prop<TaskView>("resreq", [](TaskView& v) { return LazyResource(v.resreq, &v.t->resreq, v.scope); },
                   "requests (ResourceView)"),
    Prop<TaskView>("priority", [](TaskView& v) { return Int(v.t->priority); }),
    Prop<TaskView>("preemptable", [](TaskView& v) { return Bool(v.t->preemptable); }),
    Prop<TaskView>("labels", [](TaskView& v) { return LazyLabels(v.labels, &v.t->labels, v.scope); }),
    Prop<TaskView>("annotations", [](TaskView& v) { return LazyLabels(v.annotations, &v.t->annotations, v.scope); }),
    Prop<TaskView>("node", [](TaskView& v) { return Own(v.cache->Node(v.t->node)); }, "NodeView, or None"),
    Prop<TaskView>("node_name", [](TaskView& v) { return StrOrNone(v.t->node_name); }),
    Prop<TaskView>("status", [](TaskView& v) { return PyUnicode_FromString(StatusName(v.t->status)); },
                   "Volcano's task status: Pending, Allocated, Pipelined, Binding, Bound, Running, Releasing, ..."),
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

template <Resource NodeInfo::*Field, py::object NodeView::*Slot>
PyObject* NodeResource(NodeView& v) {
  return LazyResource(v.*Slot, &(v.n->*Field), v.scope);
}

PyGetSetDef kNodeGetSet[] = {
    Prop<NodeView>("name", [](NodeView& v) { return Str(v.n->name); }),
    Prop<NodeView>("labels", [](NodeView& v) { return LazyLabels(v.labels, &v.n->labels, v.scope); }),
    Prop<NodeView>("annotations", [](NodeView& v) { return LazyLabels(v.annotations, &v.n->annotations, v.scope); }),
    Prop<NodeView>("taints", [](NodeView& v) { return Taints(*v.n); }, "a new list of {key, value, effect} dicts"),
    Prop<NodeView>("allocatable", &NodeResource<&NodeInfo::allocatable, &NodeView::allocatable>),
    Prop<NodeView>("idle", &NodeResource<&NodeInfo::idle, &NodeView::idle>),
    Prop<NodeView>("used", &NodeResource<&NodeInfo::used, &NodeView::used>),
    Prop<NodeView>("releasing", &NodeResource<&NodeInfo::releasing, &NodeView::releasing>),
    Prop<NodeView>("pipelined", &NodeResource<&NodeInfo::pipelined, &NodeView::pipelined>),
    Prop<NodeView>("tasks", [](NodeView& v) { return TaskList(v.cache, v.n->tasks); }, "a new list of TaskViews"),
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyGetSetDef kJobGetSet[] = {
    Prop<JobView>("key", [](JobView& v) { return Str(v.j->key); }, "\"namespace/name\""),
    Prop<JobView>("name", [](JobView& v) { return Str(v.j->name); }),
    Prop<JobView>("namespace", [](JobView& v) { return Str(v.j->ns); }),
    Prop<JobView>("uid", [](JobView& v) { return Str(v.j->uid); }),
    Prop<JobView>("queue", [](JobView& v) { return Str(v.j->queue); }, "the queue's name"),
    Prop<JobView>("priority", [](JobView& v) { return Int(v.j->priority); }),
    Prop<JobView>("min_available", [](JobView& v) { return Int(v.j->min_available); }),
    Prop<JobView>("creation_timestamp",
                  [](JobView& v) { return Float(static_cast<double>(v.j->creation_ms) / 1000); },
                  "seconds since the epoch"),
    Prop<JobView>("phase", [](JobView& v) { return Str(v.j->phase); }),
    Prop<JobView>("tasks", [](JobView& v) { return TaskList(v.cache, v.j->tasks); }, "a new list of TaskViews"),
    Prop<JobView>("allocated", [](JobView& v) { return LazyResource(v.allocated, &v.j->allocated, v.scope); }),
    Prop<JobView>("labels", [](JobView& v) { return LazyLabels(v.labels, &v.j->labels, v.scope); }),
    Prop<JobView>("annotations", [](JobView& v) { return LazyLabels(v.annotations, &v.j->annotations, v.scope); }),
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

template <Resource QueueInfo::*Field, py::object QueueView::*Slot>
PyObject* QueueResource(QueueView& v) {
  return LazyResource(v.*Slot, &(v.q->*Field), v.scope);
}

PyGetSetDef kQueueGetSet[] = {
    Prop<QueueView>("name", [](QueueView& v) { return Str(v.q->name); }),
    Prop<QueueView>("weight", [](QueueView& v) { return Int(v.q->weight); }),
    Prop<QueueView>("parent", [](QueueView& v) { return StrOrNone(v.q->parent); }),
    Prop<QueueView>("state", [](QueueView& v) { return Str(v.q->state); }),
    Prop<QueueView>("reclaimable", [](QueueView& v) { return Bool(v.q->reclaimable); }),
    Prop<QueueView>("capability", &QueueResource<&QueueInfo::capability, &QueueView::capability>),
    Prop<QueueView>("deserved", &QueueResource<&QueueInfo::deserved, &QueueView::deserved>),
    Prop<QueueView>("guarantee", &QueueResource<&QueueInfo::guarantee, &QueueView::guarantee>),
    Prop<QueueView>("allocated",
                    [](QueueView& v) {
                      auto owned = std::make_shared<const Resource>(v.cache->QueueAllocated(*v.q));
                      const Resource* r = owned.get();
                      return NewResourceView(r, v.scope, std::move(owned));
                    },
                    "Σ allocated of the queue's jobs now (a snapshot; its own jobs, not its children's)"),
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyGetSetDef kSessionGetSet[] = {
    Prop<SessionView>("jobs",
                      [](SessionView& v) {
                        py::list out;
                        for (const auto& [key, job] : v.s->jobs()) out.append(v.cache->Job(job));
                        return Own(out);
                      },
                      "a new list of the session's JobViews, by key"),
    Prop<SessionView>("nodes",
                      [](SessionView& v) {
                        const auto& nodes = v.s->nodes();
                        return Own(v.cache->NodeList(nodes.data(), nodes.size()));
                      },
                      "a new list of the session's (Ready) NodeViews, by name"),
    Prop<SessionView>("queues",
                      [](SessionView& v) {
                        py::list out;
                        for (const auto& [name, q] : v.s->queues()) out.append(v.cache->Queue(q));
                        return Own(out);
                      },
                      "a new list of QueueViews, by name"),
    Prop<SessionView>("now", [](SessionView& v) { return Float(static_cast<double>(v.s->now_ms()) / 1000); },
                      "the session time, seconds since the epoch"),
    Prop<SessionView>("uid", [](SessionView& v) { return Str(v.s->uid()); }),
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

// session.wake_at(t): a decision of the plugin changes at `t` (Unix seconds)
// with time alone; the loop runs a session then (Session::WakeAt).
PyObject* SessionWakeAt(PyObject* self, PyObject* arg) {
  SessionView& v = Of<SessionView>(self);
  if (Closed(v.scope)) return nullptr;
  double seconds = PyFloat_AsDouble(arg);
  if (seconds == -1.0 && PyErr_Occurred()) return nullptr;
  if (!std::isfinite(seconds) || std::abs(seconds) >= 9e15) {
    PyErr_SetString(PyExc_ValueError, "wake_at: must be Unix seconds (a finite number below 9e15)");
    return nullptr;
  }
  v.s->WakeAt(static_cast<int64_t>(std::ceil(seconds * 1000)));
  return Py_NewRef(Py_None);
}

PyMethodDef kSessionMethods[] = {
    {"wake_at", &SessionWakeAt, METH_O,
     "wake_at(t): some decision of this plugin changes at t (Unix seconds) with time alone; a session runs then"},
    {nullptr, nullptr, 0, nullptr}};

template <typename T>
PyTypeObject* EntityType(py::module_& m, const char* name, const char* qualified, PyGetSetDef* getset,
                         const char* doc) {
  PyType_Slot slots[] = {{Py_tp_dealloc, reinterpret_cast<void*>(&Dealloc<T>)},
                         {Py_tp_getset, getset},
                         {Py_tp_repr, reinterpret_cast<void*>(&Repr<T>)},
                         {Py_tp_richcompare, reinterpret_cast<void*>(&Compare<T>)},
                         {Py_tp_hash, reinterpret_cast<void*>(&Hash<T>)},
                         {Py_tp_doc, const_cast<char*>(doc)},
                         {0, nullptr}};
  return NewType(m, name, qualified, slots, sizeof(Box<T>));
}

template <>
PyTypeObject* EntityType<SessionView>(py::module_& m, const char* name, const char* qualified, PyGetSetDef* getset,
                                      const char* doc) {
  PyType_Slot slots[] = {{Py_tp_dealloc, reinterpret_cast<void*>(&Dealloc<SessionView>)},
                         {Py_tp_getset, getset},
                         {Py_tp_repr, reinterpret_cast<void*>(&Repr<SessionView>)},
                         {Py_tp_methods, kSessionMethods},
                         {Py_tp_doc, const_cast<char*>(doc)},
                         {0, nullptr}};
  return NewType(m, name, qualified, slots, sizeof(Box<SessionView>));
}

}  // namespace

namespace view_types {

bool Closed(const ScopeRef& scope) {
  if (scope->open) return false;
  PyErr_SetString(PyExc_RuntimeError, kClosedMessage);
  return true;
}

PyTypeObject* NewType(py::module_& m, const char* name, const char* qualified, PyType_Slot* slots, size_t size) {
  PyType_Spec spec{qualified, static_cast<int>(size), 0,
                   Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION, slots};
  PyObject* type = PyType_FromSpec(&spec);
  if (!type) throw py::error_already_set();
  m.attr(name) = py::reinterpret_borrow<py::object>(type);  // the module keeps one reference...
  return reinterpret_cast<PyTypeObject*>(type);             // ...and this one lives as long as the process
}

}  // namespace view_types

void CheckOpen(const ScopeRef& scope) {
  if (!scope->open) throw std::runtime_error(kClosedMessage);
}

ViewCache::ViewCache(const Session& ssn) : ssn_(ssn), nodes_(ssn.nodes().size()) {}

ViewCache::~ViewCache() { scope_->open = false; }

py::object ViewCache::Task(const TaskInfo* t) {
  if (!t) return py::none();
  py::object& slot = others_[t];
  if (!slot) slot = Steal(Make(g_task_type, TaskView{t, this, scope_, {}, {}, {}}));
  return slot;
}

py::object ViewCache::Node(const NodeInfo* n) {
  if (!n) return py::none();
  bool in_session = n->index >= 0 && static_cast<size_t>(n->index) < nodes_.size() && ssn_.nodes()[n->index] == n;
  py::object& slot = in_session ? nodes_[n->index] : others_[n];
  if (!slot) slot = Steal(Make(g_node_type, NodeView{n, this, scope_, {}, {}, {}, {}, {}, {}, {}}));
  return slot;
}

py::object ViewCache::Job(const JobInfo* j) {
  if (!j) return py::none();
  py::object& slot = others_[j];
  if (!slot) slot = Steal(Make(g_job_type, JobView{j, this, scope_, {}, {}, {}}));
  return slot;
}

py::object ViewCache::Queue(const QueueInfo* q) {
  if (!q) return py::none();
  py::object& slot = others_[q];
  if (!slot) slot = Steal(Make(g_queue_type, QueueView{q, this, scope_, {}, {}, {}}));
  return slot;
}

py::object ViewCache::SessionObject() {
  if (!session_) session_ = Steal(Make(g_session_type, SessionView{&ssn_, this, scope_}));
  return session_;
}

py::list ViewCache::NodeList(const NodeInfo* const* nodes, size_t n) {
  py::list out(n);
  for (size_t i = 0; i < n; ++i) PyList_SET_ITEM(out.ptr(), i, Node(nodes[i]).release().ptr());
  return out;
}

py::list ViewCache::TaskList(const TaskInfo* const* tasks, size_t n) {
  py::list out(n);
  for (size_t i = 0; i < n; ++i) PyList_SET_ITEM(out.ptr(), i, Task(tasks[i]).release().ptr());
  return out;
}

Resource ViewCache::QueueAllocated(const QueueInfo& q) {
  if (!queue_jobs_built_) {
    for (const auto& [key, job] : ssn_.jobs()) queue_jobs_[job->queue].push_back(job);
    queue_jobs_built_ = true;
  }
  Resource sum;
  auto it = queue_jobs_.find(q.name);
  if (it != queue_jobs_.end())
    for (const JobInfo* j : it->second) sum += j->allocated;
  return sum;
}

const TaskInfo* TaskOf(py::handle obj) {
  if (Py_TYPE(obj.ptr()) != g_task_type) return nullptr;
  const TaskView& v = Of<TaskView>(obj.ptr());
  CheckOpen(v.scope);
  return v.t;
}

void BindViews(py::module_& m) {
  BindMappings(m);
  g_task_type = EntityType<TaskView>(m, "TaskView", "volcanic._core.TaskView", kTaskGetSet,
                                     "A pod as the scheduler sees it: read-only, live, valid during its session.");
  g_node_type = EntityType<NodeView>(m, "NodeView", "volcanic._core.NodeView", kNodeGetSet,
                                     "A node as the scheduler sees it: read-only, live, valid during its session.");
  g_job_type = EntityType<JobView>(m, "JobView", "volcanic._core.JobView", kJobGetSet,
                                   "A job (PodGroup): read-only, live, valid while its session runs.");
  g_queue_type = EntityType<QueueView>(m, "QueueView", "volcanic._core.QueueView", kQueueGetSet,
                                       "A queue: read-only, valid while its session runs.");
  g_session_type = EntityType<SessionView>(m, "SessionView", "volcanic._core.SessionView", kSessionGetSet,
                                           "The session, as on_session_open/on_session_close see it.");
}

}  // namespace volcanic::bindings
