// volcanic._core.Scheduler: the Cache + configuration, driven from Python.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "volcanic/api/errors.h"
#include "volcanic/api/parse.h"
#include "volcanic/bindings/convert.h"
#include "volcanic/bindings/hook_budget.h"
#include "volcanic/bindings/metrics.h"
#include "volcanic/bindings/py_plugin.h"
#include "volcanic/framework/registry.h"
#include "volcanic/framework/scheduler.h"

namespace volcanic::bindings {
namespace {

// What an upsert converts of `obj`: all of it, but of a pod's status only what
// the cache reads (kPodStatusRead, kPodConditionRead). The rest of a running pod's status
// (conditions, container states, IPs) is most of its values.
py::object CacheView(const py::handle& obj) {
  PyObject* o = obj.ptr();
  PyObject* kind = PyDict_Check(o) ? PyDict_GetItemString(o, "kind") : nullptr;
  PyObject* status = kind ? PyDict_GetItemString(o, "status") : nullptr;
  if (!status || !PyDict_Check(status) || !PyUnicode_Check(kind) || PyUnicode_CompareWithASCIIString(kind, "Pod") != 0)
    return py::reinterpret_borrow<py::object>(obj);
  py::dict read;
  for (const char* field : kPodStatusRead)
    if (PyObject* v = PyDict_GetItemString(status, field)) read[field] = py::handle(v);
  if (PyObject* conds = PyDict_GetItemString(status, "conditions"); conds && PyList_Check(conds)) {
    py::list kept;
    for (py::handle c : py::reinterpret_borrow<py::list>(conds)) {
      PyObject* type = PyDict_Check(c.ptr()) ? PyDict_GetItemString(c.ptr(), "type") : nullptr;
      if (type && PyUnicode_Check(type) && PyUnicode_CompareWithASCIIString(type, kPodConditionRead) == 0) kept.append(c);
    }
    read["conditions"] = kept;
  }
  py::object view = py::reinterpret_steal<py::object>(PyDict_Copy(o));
  if (!view) throw py::error_already_set();
  view["status"] = read;
  return view;
}

// Queue quantities as {resource: quantity} dicts. Formatting one costs about
// ten thousand instructions, and the values repeat (a queue's allocated is its
// parent's, or its deserved; a session reports the same queue as the last), so
// the last few are kept and handed out as copies.
class QuantityDicts {
 public:
  py::dict Of(const Resource& r) {
    // Same stored dimensions and values: the same text (== alone reads missing
    // dimensions as the fill, which ToQuantities leaves out).
    auto same = [&r](const auto& e) { return e.first.Size() == r.Size() && e.first == r; };
    auto hit = std::find_if(recent_.begin(), recent_.end(), same);
    if (hit == recent_.end()) {
      py::dict formatted;
      for (const auto& [name, q] : r.ToQuantities()) formatted[py::str(name)] = q;
      hit = recent_.begin() + next_;
      *hit = {r, std::move(formatted)};
      next_ = (next_ + 1) % recent_.size();
    }
    return py::reinterpret_steal<py::dict>(PyDict_Copy(hit->second.ptr()));
  }

 private:
  std::array<std::pair<Resource, py::dict>, 4> recent_;
  size_t next_ = 0;
};

// A fixed dict key as an interned str, made once: pybind11 would build it from
// the C string for every item, which cost a quarter of converting decisions.
// Called with the GIL held.
py::handle Key(const char* name) {
  static auto* keys = new absl::flat_hash_map<const char*, PyObject*>();
  auto [it, added] = keys->try_emplace(name, nullptr);
  if (added) it->second = PyUnicode_InternFromString(name);
  return it->second;
}

py::dict ToPython(const Decisions& d, QuantityDicts& quantities, bool metrics) {
  py::dict binds, pipelined, podgroups, queues, unschedulable, seconds;
  py::list evictions, ungate;
  for (const auto& [k, n] : d.binds) binds[py::str(k)] = n;
  for (const auto& k : d.evictions) evictions.append(k);
  for (const auto& k : d.ungate) ungate.append(k);
  for (const auto& [k, n] : d.pipelined) pipelined[py::str(k)] = n;
  for (const auto& [k, st] : d.podgroups) {
    py::list conds;
    for (const auto& c : st.conditions) {
      py::dict cd;
      cd[Key("type")] = c.type;
      cd[Key("status")] = c.status;
      cd[Key("transitionID")] = c.transition_id;
      cd[Key("lastTransitionTime")] = c.last_transition_time;
      cd[Key("reason")] = c.reason;
      cd[Key("message")] = c.message;
      conds.append(cd);
    }
    py::dict pg;
    pg[Key("phase")] = st.phase;
    pg[Key("conditions")] = conds;
    pg[Key("running")] = st.running;
    pg[Key("succeeded")] = st.succeeded;
    pg[Key("failed")] = st.failed;
    podgroups[py::str(k)] = pg;
  }
  for (const auto& [name, alloc] : d.queue_allocated) {
    py::dict q;
    q[Key("allocated")] = quantities.Of(alloc);
    if (auto it = d.queue_deserved.find(name); it != d.queue_deserved.end())
      q[Key("deserved")] = quantities.Of(it->second);
    queues[py::str(name)] = q;
  }
  for (const auto& [k, reason] : d.unschedulable) unschedulable[py::str(k)] = reason;
  py::dict events;
  for (const auto& [k, e] : d.podgroup_events) events[py::str(k)] = py::make_tuple(e.type, e.reason, e.message);
  for (const auto& [name, s] : d.action_seconds) seconds[py::str(name)] = s;
  py::dict timings;
  for (const auto& [plugin, hooks] : d.plugin_timings) {
    py::dict by_hook;
    for (const auto& [hook, t] : hooks) {
      py::dict time;
      time[Key("seconds")] = static_cast<double>(t.nanos) / 1e9;
      time[Key("calls")] = t.calls;
      by_hook[py::str(hook)] = time;
    }
    timings[py::str(plugin)] = by_hook;
  }
  py::dict out;
  out[Key("binds")] = binds;
  out[Key("bind_annotations")] = d.bind_annotations;
  py::dict volume_binds;
  for (const auto& [pod, choices] : d.volume_binds) {
    py::dict claims;
    for (const VolumeChoice& ch : choices)
      claims[py::str(ch.claim)] = ch.volume.empty() ? py::object(py::none()) : py::object(py::str(ch.volume));
    volume_binds[py::str(pod)] = claims;
  }
  out[Key("volume_binds")] = volume_binds;
  out[Key("volume_bind_timeout")] = static_cast<double>(d.volume_bind_timeout_s);
  out[Key("evictions")] = evictions;
  out[Key("ungate")] = ungate;
  out[Key("pipelined")] = pipelined;
  out[Key("podgroups")] = podgroups;
  out[Key("queues")] = queues;
  out[Key("unschedulable")] = unschedulable;
  out[Key("podgroup_events")] = events;
  py::dict why;
  for (const auto& [k, w] : d.why) {
    py::dict j;
    j[Key("queue")] = w.queue;
    j[Key("reasons")] = w.reasons;
    j[Key("position")] = w.position;
    j[Key("queue_position")] = w.queue_position;
    why[py::str(k)] = j;
  }
  out[Key("why")] = why;
  out[Key("deferred")] = d.deferred;
  out[Key("pending")] = d.pending;
  out[Key("wake_at")] = d.wake_at_ms ? py::object(py::float_(static_cast<double>(*d.wake_at_ms) / 1000))
                                     : py::object(py::none());
  out[Key("action_seconds")] = seconds;
  out[Key("plugin_timings")] = timings;
  if (metrics) out[Key("metrics")] = MetricsToPython(d.metrics);
  return out;
}

// A Python plugin as volcanic.scheduler.plugins hands it over: (name, class,
// hook names, node_local).
using PyPluginSpec = std::tuple<std::string, py::object, std::vector<std::string>, bool>;

Registry RegistryWith(const std::vector<PyPluginSpec>& plugins) {
  Registry registry = Registry::Builtins();
  for (const auto& [name, cls, hooks, node_local] : plugins) AddPyPlugin(registry, name, cls, hooks, node_local);
  return registry;
}

SchedulerConf ConfFrom(const std::optional<std::string>& conf_json, const Registry& registry) {
  if (!conf_json) return DefaultSchedulerConf();
  nlohmann::json j = nlohmann::json::parse(*conf_json, nullptr, false);
  if (j.is_discarded()) Raise(ConfigError("scheduler configuration: not valid JSON"));
  auto conf = ParseSchedulerConf(j, registry);  // builds each plugin once to check its arguments
  RaiseInterrupt();
  Check(conf.status());
  return *std::move(conf);
}

Scheduler MakeScheduler(const std::optional<std::string>& conf_json, const std::vector<PyPluginSpec>& plugins,
                        bool bare_pods_as_groups, bool queue_allocation_gate) {
  Registry registry = RegistryWith(plugins);
  SchedulerConf conf = ConfFrom(conf_json, registry);
  ParseOptions opts;
  opts.bare_pods_as_groups = bare_pods_as_groups;
  FeatureGates features;
  features.queue_allocation_gate = queue_allocation_gate;
  return Scheduler(std::move(conf), std::move(registry), std::move(opts), features);
}

std::unique_ptr<HookBudget> BudgetOf(std::optional<double> seconds) {
  if (!seconds) return nullptr;
  if (!(*seconds > 0) || !std::isfinite(*seconds))
    throw py::value_error("python_hook_budget: must be a positive number of seconds or None");
  auto budget = std::make_unique<HookBudget>();
  budget->limit = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(*seconds));
  budget->watchdog = std::make_unique<Watchdog>();
  return budget;
}

// One Scheduler may be used from several Python threads: a session runs
// without the GIL, so every use of the cache takes `mu_` (with the GIL
// released while waiting, so other Python threads run meanwhile). A Python
// plugin's hook that calls back into the scheduler running it would wait for
// itself: that raises RuntimeError instead.
class PyScheduler {
 public:
  PyScheduler(const std::optional<std::string>& conf_json, const std::vector<PyPluginSpec>& plugins,
              std::optional<double> python_hook_budget, bool bare_pods_as_groups, bool queue_allocation_gate)
      : budget_(BudgetOf(python_hook_budget)),
        s_(MakeScheduler(conf_json, plugins, bare_pods_as_groups, queue_allocation_gate)) {}

  ~PyScheduler() {
    py::gil_scoped_release release;  // the watchdog may be waiting for the GIL
    budget_.reset();
  }

  // Whether the scheduler's view changed (Cache::Change).
  bool Upsert(const py::handle& obj) { return UpsertChange(obj) == Cache::Change::kChanged; }

  Cache::Change UpsertChange(const py::handle& obj) {
    NotFromOwnSession();
    const nlohmann::json& j = ToJson(CacheView(obj));
    absl::StatusOr<Cache::Change> r;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mu_);
      r = s_.cache().Upsert(j);
    }
    Check(r.status());
    return *r;
  }

  int UpsertMany(const py::iterable& objs) {
    int n = 0;
    for (auto obj : objs) n += UpsertChange(obj) != Cache::Change::kIgnored ? 1 : 0;
    return n;
  }

  void Delete(const std::string& kind, const std::string& name, const std::optional<std::string>& ns) {
    NotFromOwnSession();
    absl::Status st;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mu_);
      st = s_.cache().Delete(kind, name, ns.value_or(""));
    }
    Check(st);
  }

  // Whether the node's recorded load changed; KeyError for an unknown node.
  bool SetNodeUsage(const std::string& node, double cpu, double memory, int64_t metrics_ms) {
    NotFromOwnSession();
    absl::StatusOr<Cache::Change> r;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mu_);
      r = s_.cache().SetNodeUsage(node, NodeUsage{cpu, memory, metrics_ms});
    }
    if (absl::IsNotFound(r.status())) throw py::key_error(std::string(r.status().message()));
    Check(r.status());
    return *r == Cache::Change::kChanged;
  }

  void ForgetStatus(const std::string& kind, const std::string& key) {
    NotFromOwnSession();
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mu_);
    s_.ForgetStatus(kind, key);
  }

  void Forget(const std::string& key) {
    NotFromOwnSession();
    absl::Status st;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mu_);
      st = s_.cache().Forget(key);
    }
    if (absl::IsNotFound(st)) throw py::key_error(std::string(st.message()));
    Check(st);
  }

  py::dict RunOnce(int64_t now_ms, bool changed_only, bool timings, bool metrics) {
    NotFromOwnSession();
    absl::StatusOr<Decisions> d;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mu_);
      session_thread_ = std::this_thread::get_id();
      ScopedHookBudget budget(budget_.get());
      d = s_.RunOnce(now_ms, changed_only, timings, metrics);
      session_thread_ = std::thread::id();
    }
    RaiseInterrupt();
    Check(d.status());
    return ToPython(*d, quantities_, metrics);
  }

  uint64_t GangsFilled() {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mu_);
    return s_.cache().gangs_filled();
  }

  // Sizes that must follow what is alive, not what was ever seen.
  py::dict Stats() {
    int classes;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mu_);
      classes = s_.cache().class_count();
    }
    py::dict out;
    out["task_classes"] = classes;
    out["resource_names"] = ResourceNames::Count();  // process-wide: every Scheduler's names
    out["resource_width"] = ResourceNames::Width();
    return out;
  }

 private:
  void NotFromOwnSession() const {
    if (session_thread_.load() == std::this_thread::get_id())
      throw std::runtime_error("a plugin cannot use the Scheduler whose session is running it");
  }

  std::mutex mu_;
  std::atomic<std::thread::id> session_thread_{};
  std::unique_ptr<HookBudget> budget_;
  QuantityDicts quantities_;
  Scheduler s_;
};

}  // namespace

void BindScheduler(py::module_& m) {
  py::class_<PyScheduler>(m, "Scheduler")
      .def(py::init<const std::optional<std::string>&, const std::vector<PyPluginSpec>&, std::optional<double>,
                    bool, bool>(),
           py::arg("conf_json") = py::none(), py::arg("plugins") = std::vector<PyPluginSpec>(),
           py::arg("python_hook_budget") = py::none(), py::arg("bare_pods_as_groups") = false,
           py::arg("queue_allocation_gate") = false)
      .def("upsert", &PyScheduler::Upsert, py::arg("obj"))
      .def("upsert_many", &PyScheduler::UpsertMany, py::arg("objs"))
      .def("delete", &PyScheduler::Delete, py::arg("kind"), py::arg("name"), py::arg("namespace") = py::none())
      .def("forget", &PyScheduler::Forget, py::arg("key"))
      .def("forget_status", &PyScheduler::ForgetStatus, py::arg("kind"), py::arg("key"))
      .def("set_node_usage", &PyScheduler::SetNodeUsage, py::arg("node"), py::arg("cpu"), py::arg("memory"),
           py::arg("metrics_ms"))
      .def("run_once", &PyScheduler::RunOnce, py::arg("now_ms"), py::arg("changed_only") = false,
           py::arg("timings") = true, py::arg("metrics") = false)
      .def("stats", &PyScheduler::Stats)
      .def("gangs_filled", &PyScheduler::GangsFilled);
  m.def("action_names", [] { return Registry::Builtins().ActionNames(); });
}

}  // namespace volcanic::bindings
