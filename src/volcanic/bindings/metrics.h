// Decisions::metrics as Python sees it (volcanic.Decisions.metrics).
#pragma once

#include <pybind11/pybind11.h>

#include "volcanic/framework/decisions.h"

namespace volcanic::bindings {

// queues: name -> {allocated, request, deserved, capability, real_capability,
// inqueue: {resource: amount in engine units}, share, weight, overused}, each
// key only when a plugin reported it; queue_podgroups, queue_tasks: queue ->
// phase/status -> count; scheduled: job key -> (queue, creation time in Unix
// seconds, tasks bound this session); job_shares, unschedulable_tasks: job key -> value;
// unschedulable_jobs (None without gang); preemption_attempts;
// preemption_victims (a list); plugin_session_seconds: plugin -> (open,
// close); open_seconds.
pybind11::dict MetricsToPython(const SessionMetrics& m);

}  // namespace volcanic::bindings
