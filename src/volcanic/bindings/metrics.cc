#include "volcanic/bindings/metrics.h"

#include <pybind11/stl.h>

#include "volcanic/api/resource.h"

namespace py = pybind11;

namespace volcanic::bindings {
namespace {

// Every stored dimension by name, in the engine's units (Volcano's: cpu
// millicores, memory bytes, other resources milli-units).
py::dict Amounts(const Resource& r) {
  py::dict out;
  for (int i = 0; i < r.Size(); ++i) out[py::str(ResourceNames::Name(i))] = r.Get(i);
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
