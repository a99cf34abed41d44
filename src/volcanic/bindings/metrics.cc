#include "volcanic/bindings/metrics.h"

#include <pybind11/stl.h>

#include <algorithm>

#include "volcanic/api/resource.h"

namespace py = pybind11;

namespace volcanic::bindings {
namespace {

// The dimensions that hold an amount, by name, in the engine's units
// (Volcano's: cpu millicores, memory bytes, other resources milli-units). A 0
// is left out (the exporter reads a missing one as 0), as is an unbounded one:
// a vector may be wider than the names in use, whose ids past the last are
// no name's (ids are reused once no object holds them).
py::dict Amounts(const Resource& r) {
  py::dict out;
  int width = std::min(r.Size(), ResourceNames::Width());
  for (int i = 0; i < width; ++i) {
    int64_t v = r.Get(i);
    if (v == 0 || v >= Resource::kInfinite) continue;
    out[py::str(ResourceNames::Name(i))] = v;
  }
  return out;
}

py::dict QueueToPython(const QueueMetrics& q) {
  py::dict out;
  auto put = [&out](const char* key, const std::optional<Resource>& r) {
    if (r) out[key] = Amounts(*r);
  };
  put("allocated", q.allocated);
  put("request", q.request);
  put("deserved", q.deserved);
  put("capability", q.capability);
  put("real_capability", q.real_capability);
  put("inqueue", q.inqueue);
  if (q.share) out["share"] = *q.share;
  if (q.weight) out["weight"] = *q.weight;
  if (q.overused) out["overused"] = *q.overused;
  return out;
}

}  // namespace

py::dict MetricsToPython(const SessionMetrics& m) {
  py::dict queues;
  for (const auto& [name, q] : m.queues) queues[py::str(name)] = QueueToPython(q);
  py::dict scheduled;
  for (const auto& [key, j] : m.scheduled)
    scheduled[py::str(key)] = py::make_tuple(j.queue, static_cast<double>(j.creation_ms) / 1000, j.tasks);
  py::dict out;
  out["queues"] = queues;
  out["scheduled"] = scheduled;
  out["queue_podgroups"] = m.queue_podgroups;
  out["queue_tasks"] = m.queue_tasks;
  out["job_shares"] = m.job_shares;
  out["unschedulable_tasks"] = m.unschedulable_tasks;
  out["unschedulable_jobs"] = m.unschedulable_jobs;
  out["preemption_attempts"] = m.preemption_attempts;
  out["preemption_victims"] = m.preemption_victims;
  out["plugin_session_seconds"] = m.plugin_session_seconds;
  out["open_seconds"] = m.open_seconds;
  return out;
}

}  // namespace volcanic::bindings
