// Read-only Python views of the engine's objects, for Python plugins
// (docs/plugins-python.md).
//
// Promises: a view wraps a const pointer into the cache and reads it live at
// each access; it copies nothing up front. Views are valid while the session
// that handed them out runs: every access first checks the session's
// ViewScope and raises RuntimeError once the session has ended, so a view
// kept past its session never touches freed memory. Nothing can be set on a
// view (AttributeError).
// Cost: one view object per engine object and session (a ViewCache hands out
// the same Python object each time, so identity holds within a session);
// resource and label lookups are O(1) / O(log labels) without copying. The
// classes are plain CPython types (view_types.h), so reading a field costs
// tens of nanoseconds. Everything here runs with the GIL held.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "volcanic/api/types.h"

namespace volcanic {
class Session;
}

namespace volcanic::bindings {

namespace py = pybind11;

// Whether the session of a view still runs. Shared by the views of one
// session and closed when the session's Python plugin is destroyed.
struct ViewScope {
  bool open = true;
};
using ScopeRef = std::shared_ptr<ViewScope>;

class ViewCache;

// A Resource as a read-only mapping name -> int in engine units (cpu in
// millicores, memory-like resources in bytes, others in milli-units); an
// unbounded dimension (a queue capability that omits it) reads math.inf.
struct ResourceView {
  const Resource* r;
  ScopeRef scope;
  std::shared_ptr<const Resource> owned;  // set when r is a computed vector
};

// Labels or annotations as a read-only mapping str -> str.
struct LabelsView {
  const Labels* m;
  ScopeRef scope;
};

struct TaskView {
  const TaskInfo* t;
  ViewCache* cache;
  ScopeRef scope;
  py::object resreq, labels, annotations;  // made on first access
};

struct NodeView {
  const NodeInfo* n;
  ViewCache* cache;
  ScopeRef scope;
  py::object allocatable, idle, used, releasing, pipelined, labels, annotations;
};

struct JobView {
  const JobInfo* j;
  ViewCache* cache;
  ScopeRef scope;
  py::object allocated, labels, annotations;
};

struct QueueView {
  const QueueInfo* q;
  ViewCache* cache;
  ScopeRef scope;
  py::object capability, deserved, guarantee;
};

struct SessionView {
  const Session* s;
  ViewCache* cache;
  ScopeRef scope;
};

// The views of one session, for one Python plugin. Destroying it (with the
// GIL held) closes the scope: views still held elsewhere then raise.
class ViewCache {
 public:
  explicit ViewCache(const Session& ssn);
  ~ViewCache();
  ViewCache(const ViewCache&) = delete;
  ViewCache& operator=(const ViewCache&) = delete;

  py::object Task(const TaskInfo* t);
  py::object Node(const NodeInfo* n);  // None for nullptr
  py::object Job(const JobInfo* j);    // None for nullptr
  py::object Queue(const QueueInfo* q);
  py::object Queue(const std::string& name);  // None for an unknown queue
  py::object SessionObject();
  // A new list of the views of `nodes` / `tasks`.
  py::list NodeList(const NodeInfo* const* nodes, size_t n);
  py::list TaskList(const TaskInfo* const* tasks, size_t n);
  // Σ allocated of the session's jobs in the queue (its own jobs, not its
  // children's). O(jobs of the queue); the index is built on first use.
  Resource QueueAllocated(const QueueInfo& q);

  const Session& session() const { return ssn_; }
  const ScopeRef& scope() const { return scope_; }

 private:
  const Session& ssn_;
  ScopeRef scope_ = std::make_shared<ViewScope>();
  std::vector<py::object> nodes_;  // by session node index
  absl::flat_hash_map<const void*, py::object> others_;  // tasks, jobs, queues, off-session nodes
  py::object session_;
  bool queue_jobs_built_ = false;
  absl::flat_hash_map<std::string, std::vector<const JobInfo*>> queue_jobs_;
};

// Raises RuntimeError unless the view's session still runs.
void CheckOpen(const ScopeRef& scope);

// The engine pointer behind a task view, or nullptr when `obj` is not one.
const TaskInfo* TaskOf(py::handle obj);

// Defines the view classes on the module (ResourceView and LabelsView are
// registered as collections.abc.Mapping).
void BindViews(py::module_& m);

}  // namespace volcanic::bindings
