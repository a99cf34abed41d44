#include "volcanic/bindings/py_plugin.h"

#include <array>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "volcanic/api/errors.h"
#include "volcanic/bindings/convert.h"
#include "volcanic/bindings/hook_budget.h"
#include "volcanic/bindings/views.h"
#include "volcanic/framework/session.h"

namespace volcanic::bindings {
namespace {

// A hook answered with a value of the wrong type or range.
struct BadAnswer : std::runtime_error {
  BadAnswer(int hook, const std::string& what) : std::runtime_error(absl::StrCat(HookName(hook), " ", what)) {}
};

std::string TypeName(py::handle obj) { return Py_TYPE(obj.ptr())->tp_name; }

[[noreturn]] void Wrong(int hook, py::handle answer, const char* expected) {
  throw BadAnswer(hook, absl::StrCat("returned ", TypeName(answer), "; expected ", expected));
}

// The sign of an order answer: an int, or a float that is not NaN.
int Sign(int hook, py::handle r) {
  if (PyLong_Check(r.ptr())) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(r.ptr(), &overflow);
    if (overflow != 0) return overflow;
    return (v > 0) - (v < 0);
  }
  if (PyFloat_Check(r.ptr())) {
    double d = PyFloat_AS_DOUBLE(r.ptr());
    if (std::isnan(d)) throw BadAnswer(hook, "returned nan; expected an int");
    return (d > 0) - (d < 0);
  }
  Wrong(hook, r, "an int (<0: the first goes first, >0: the second, 0: no opinion)");
}

// A finite score: a float, an int, or anything with __float__ / __index__
// (numpy scalars) but not a str or None.
double Score(int hook, py::handle r) {
  double d;
  if (PyFloat_Check(r.ptr())) {
    d = PyFloat_AS_DOUBLE(r.ptr());
  } else if (PyLong_Check(r.ptr()) || (PyNumber_Check(r.ptr()) && !PyUnicode_Check(r.ptr()))) {
    d = PyFloat_AsDouble(r.ptr());
    if (d == -1.0 && PyErr_Occurred()) throw py::error_already_set();
  } else {
    Wrong(hook, r, "a number");
  }
  if (!std::isfinite(d)) throw BadAnswer(hook, absl::StrCat("returned ", d, "; expected a finite number"));
  return d;
}

bool Bool(int hook, py::handle r) {
  if (r.ptr() == Py_True) return true;
  if (r.ptr() == Py_False) return false;
  Wrong(hook, r, "a bool");
}

// Volcano's votes: True permits, False rejects, None abstains.
int Vote(int hook, py::handle r) {
  if (r.ptr() == Py_True) return kPermit;
  if (r.ptr() == Py_False) return kReject;
  if (r.is_none()) return kAbstain;
  Wrong(hook, r, "True (permit), False (reject) or None (abstain)");
}

std::string Traceback(py::error_already_set& e) {
  try {
    py::object lines = py::module_::import("traceback").attr("format_exception")(e.type(), e.value(), e.trace());
    return std::string(absl::StripTrailingAsciiWhitespace(py::str("").attr("join")(lines).cast<std::string>()));
  } catch (const std::exception&) {
    return e.what();
  }
}

// Drops a Python reference from any thread; at interpreter exit leaks it
// rather than touching a finalized interpreter.
void Drop(py::object& obj) {
  if (!obj) return;
  if (!InterpreterAlive()) {
    obj.release();
    return;
  }
  Gil gil;
  obj = py::object();
}

NodeLocalFn LocalFn(bool node_local) {
  if (!node_local) return nullptr;  // the session's default: not node-local
  return [](const TaskInfo&) { return true; };
}

class PyPlugin : public Plugin {
 public:
  // An instance leaves out a hook its class defines by setting it to None
  // (in __init__: what its arguments do not ask for costs nothing).
  PyPlugin(std::shared_ptr<const PyPluginClass> cls, py::object instance)
      : cls_(std::move(cls)), instance_(std::move(instance)) {
    for (int h = 0; h < kHookCount; ++h) {
      if (!cls_->hooks[h]) continue;
      py::object method = instance_.attr(HookName(h));
      if (!method.is_none()) methods_[h] = std::move(method);
    }
  }

  // node_local promises answers within a session only (docs/plugins-python.md).
  bool AnswersOutliveSession() const override { return false; }

  ~PyPlugin() override {
    if (!InterpreterAlive()) {  // leak rather than touch a finalized interpreter
      views_.release();
      for (auto& m : methods_) m.release();
      instance_.release();
      return;
    }
    Gil gil;
    views_.reset();  // closes the views' scope
    for (auto& m : methods_) m = py::object();
    instance_ = py::object();
  }

  void OnSessionOpen(PluginHandle& h) override {
    ssn_ = &h.session();
    budget_ = CurrentHookBudget();
    {
      Gil gil;
      views_ = std::make_unique<ViewCache>(*ssn_);
    }
    RegisterOrders(h);
    RegisterNodeHooks(h);
    RegisterVictimHooks(h);
    RegisterJobHooks(h);
    RegisterEventHooks(h);
    if (Has(kOnSessionOpen))
      Guard(kOnSessionOpen, 0, [&] { return Ignore(Call(kOnSessionOpen, views_->SessionObject())); });
  }

  void OnSessionClose(Session& ssn) override {
    if (Has(kOnSessionClose))
      Guard(kOnSessionClose, 0, [&] { return Ignore(Call(kOnSessionClose, views_->SessionObject())); });
  }

 private:
  bool Has(int hook) const { return static_cast<bool>(methods_[hook]); }
  static int Ignore(const py::object&) { return 0; }

  // Runs `body` with the GIL; on a Python exception or a bad answer, or when
  // the Scheduler's hook budget runs out (hook_budget.h), fails the session
  // and answers `neutral`. Once the session has failed (here or in another
  // plugin) Python is not called again.
  template <typename R, typename Body>
  R Guard(int hook, R neutral, Body&& body) {
    if (ssn_->failed()) return neutral;
    Gil gil;
    HookClock clock(budget_);
    std::optional<R> answer;
    std::string error;
    try {
      answer = body();
    } catch (py::error_already_set& e) {
      // HookBudgetExceeded is the budget's, not the plugin's error.
      if (!clock.Stop()) {
        KeepIfInterrupt(e);
        error = Traceback(e);
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
    if (clock.Stop()) {
      FailOverBudget(hook);
      return neutral;
    }
    if (!answer) {
      Fail(hook, error);
      return neutral;
    }
    return *std::move(answer);
  }

  void Fail(int hook, const std::string& detail) {
    ssn_->Fail(PluginError(cls_->name, absl::StrCat("plugin \"", cls_->name, "\" failed in ", HookName(hook), ":\n",
                                                    detail)));
  }

  void FailOverBudget(int hook) {
    using Seconds = std::chrono::duration<double>;
    ssn_->Fail(PluginError(
        cls_->name,
        absl::StrCat("plugin \"", cls_->name, "\" exceeded the Python hook time budget in ", HookName(hook),
                     ": Python hooks took ", Seconds(budget_->used).count(), " s in this session, over the budget of ",
                     Seconds(budget_->limit).count(), " s (Scheduler python_hook_budget)")));
  }

  template <typename... Args>
  py::object Call(int hook, const Args&... args) {
    PyObject* argv[] = {args.ptr()...};
    PyObject* r = PyObject_Vectorcall(methods_[hook].ptr(), argv, sizeof...(Args), nullptr);
    if (!r) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(r);
  }

  void RegisterOrders(PluginHandle& h) {
    if (Has(kJobOrder))
      h.AddJobOrderFn([this](const JobInfo& a, const JobInfo& b) {
        return Guard(kJobOrder, 0,
                     [&] { return Sign(kJobOrder, Call(kJobOrder, views_->Job(&a), views_->Job(&b))); });
      });
    if (Has(kTaskOrder))
      h.AddTaskOrderFn([this](const TaskInfo& a, const TaskInfo& b) {
        return Guard(kTaskOrder, 0,
                     [&] { return Sign(kTaskOrder, Call(kTaskOrder, views_->Task(&a), views_->Task(&b))); });
      });
    if (Has(kQueueOrder))
      h.AddQueueOrderFn([this](const QueueInfo& a, const QueueInfo& b) {
        return Guard(kQueueOrder, 0,
                     [&] { return Sign(kQueueOrder, Call(kQueueOrder, views_->Queue(&a), views_->Queue(&b))); });
      });
  }

  void RegisterNodeHooks(PluginHandle& h) {
    if (Has(kPredicate))
      h.AddPredicateFn([this](const TaskInfo& t, const NodeInfo& n, std::vector<std::string>* reasons) {
        return Guard(kPredicate, Verdict::kFit, [&] { return Predicate(t, n, reasons); });
      });
    if (Has(kNodeOrder))
      h.AddNodeOrderFn([this](const TaskInfo& t, const NodeInfo& n) {
        return Guard(kNodeOrder, 0.0,
                     [&] { return Score(kNodeOrder, Call(kNodeOrder, views_->Task(&t), views_->Node(&n))); });
      });
    if (Has(kBatchNodeOrder))
      h.AddBatchNodeOrderFn([this](const TaskInfo& t, absl::Span<NodeInfo* const> nodes, std::vector<double>* scores) {
        Guard(kBatchNodeOrder, 0, [&] { return BatchScores(t, nodes, scores); });
      });
    h.SetNodeLocal(LocalFn(cls_->node_local));
  }

  // None passes; a str is the reason the node is rejected. Like kube's
  // Unschedulable: preempt may still try evicting there (and checks every
  // predicate again before placing); an Unresolvable (a str subclass,
  // plugins.py) is kube's UnschedulableAndUnresolvable: evicting cannot help.
  Verdict Predicate(const TaskInfo& t, const NodeInfo& n, std::vector<std::string>* reasons) {
    py::object r = Call(kPredicate, views_->Task(&t), views_->Node(&n));
    if (r.is_none()) return Verdict::kFit;
    if (!PyUnicode_Check(r.ptr())) Wrong(kPredicate, r, "None (fits) or a str (the reason it does not)");
    reasons->push_back(Reason(r, "node(s) rejected by plugin "));
    return PyUnicode_CheckExact(r.ptr()) || !IsUnresolvable(r) ? Verdict::kUnschedulable : Verdict::kUnresolvable;
  }

  // A str answer; an empty one reads `if_empty` and the plugin's name.
  std::string Reason(py::handle str, const char* if_empty) const {
    std::string reason = str.cast<std::string>();
    return reason.empty() ? absl::StrCat(if_empty, cls_->name) : reason;
  }

  static bool IsUnresolvable(py::handle str) {
    // Imported once, with the GIL; kept for the life of the process.
    static PyObject* type =
        py::object(py::module_::import("volcanic.scheduler.plugins").attr("Unresolvable")).release().ptr();
    int is = PyObject_IsInstance(str.ptr(), type);
    if (is < 0) throw py::error_already_set();
    return is == 1;
  }

  int BatchScores(const TaskInfo& t, absl::Span<NodeInfo* const> nodes, std::vector<double>* scores) {
    py::list list = views_->NodeList(nodes.data(), nodes.size());
    py::object r = Call(kBatchNodeOrder, views_->Task(&t), list);
    if (!PySequence_Check(r.ptr()) || PyUnicode_Check(r.ptr()) || PyBytes_Check(r.ptr()))
      Wrong(kBatchNodeOrder, r, "a sequence of numbers, one per node");
    py::object seq = py::reinterpret_steal<py::object>(PySequence_Fast(r.ptr(), "batch_node_order"));
    if (!seq) throw py::error_already_set();
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq.ptr());
    if (static_cast<size_t>(n) != nodes.size())
      throw BadAnswer(kBatchNodeOrder, absl::StrCat("returned ", n, " scores for ", nodes.size(), " nodes"));
    PyObject** items = PySequence_Fast_ITEMS(seq.ptr());
    for (Py_ssize_t i = 0; i < n; ++i) (*scores)[i] += Score(kBatchNodeOrder, items[i]);
    return 0;
  }

  static std::optional<std::vector<TaskInfo*>> Abstain() { return std::nullopt; }

  void RegisterVictimHooks(PluginHandle& h) {
    if (Has(kPreemptable))
      h.AddPreemptableFn([this](const TaskInfo& p, const std::vector<TaskInfo*>& c) {
        return Guard(kPreemptable, Abstain(), [&] { return Victims(kPreemptable, p, c); });
      });
    if (Has(kReclaimable))
      h.AddReclaimableFn([this](const TaskInfo& p, const std::vector<TaskInfo*>& c) {
        return Guard(kReclaimable, Abstain(), [&] { return Victims(kReclaimable, p, c); });
      });
  }

  // None abstains; otherwise the chosen candidates, as their views (or task
  // keys), in the plugin's order. Anything that is not a candidate is an error.
  std::optional<std::vector<TaskInfo*>> Victims(int hook, const TaskInfo& p, const std::vector<TaskInfo*>& c) {
    py::object r = Call(hook, views_->Task(&p), views_->TaskList(c.data(), c.size()));
    if (r.is_none()) return std::nullopt;
    if (PyUnicode_Check(r.ptr()) || !PyObject_HasAttrString(r.ptr(), "__iter__"))
      Wrong(hook, r, "None (abstain) or a list of candidates");
    std::vector<TaskInfo*> out;
    for (py::handle item : r) {
      const TaskInfo* t = TaskOf(item);
      std::string key = t ? t->key : PyUnicode_Check(item.ptr()) ? item.cast<std::string>() : std::string();
      if (!t && key.empty()) Wrong(hook, item, "task views or task keys in the list");
      TaskInfo* found = nullptr;
      for (TaskInfo* cand : c)
        if (t ? cand == t : cand->key == key) found = cand;
      if (!found) throw BadAnswer(hook, absl::StrCat("returned ", t ? t->key : key, ", which is not a candidate"));
      if (std::find(out.begin(), out.end(), found) == out.end()) out.push_back(found);
    }
    return out;
  }

  void RegisterJobHooks(PluginHandle& h) {
    if (Has(kJobReady))
      h.AddJobReadyFn([this](const JobInfo& j) {
        return Guard(kJobReady, true, [&] { return Bool(kJobReady, Call(kJobReady, views_->Job(&j))); });
      });
    if (Has(kJobPipelined))
      h.AddJobPipelinedFn([this](const JobInfo& j) {
        return Guard(kJobPipelined, kAbstain,
                     [&] { return Vote(kJobPipelined, Call(kJobPipelined, views_->Job(&j))); });
      });
    if (Has(kJobEnqueueable))
      h.AddJobEnqueueableFn([this](const JobInfo& j) {
        return Guard(kJobEnqueueable, kAbstain,
                     [&] { return Vote(kJobEnqueueable, Call(kJobEnqueueable, views_->Job(&j))); });
      });
    if (Has(kOverused))
      h.AddOverusedFn([this](const QueueInfo& q) {
        return Guard(kOverused, false, [&] { return Bool(kOverused, Call(kOverused, views_->Queue(&q))); });
      });
  }

  // on_allocate: None accepts the placement, a str refuses it with that
  // reason (Session::RefusePlacement; ignored where a placement cannot be
  // refused). on_deallocate's answer is ignored.
  void RegisterEventHooks(PluginHandle& h) {
    if (Has(kOnAllocate))
      h.AddOnAllocateFn([this](const TaskInfo& t) {
        Guard(kOnAllocate, 0, [&] {
          py::object r = Call(kOnAllocate, views_->Task(&t));
          if (r.is_none()) return 0;
          if (!PyUnicode_Check(r.ptr())) Wrong(kOnAllocate, r, "None (accept) or a str (the reason to refuse)");
          ssn_->RefusePlacement(Reason(r, "placement refused by plugin "));
          return 0;
        });
      });
    if (Has(kOnDeallocate))
      h.AddOnDeallocateFn([this](const TaskInfo& t) {
        Guard(kOnDeallocate, 0, [&] { return Ignore(Call(kOnDeallocate, views_->Task(&t))); });
      });
  }

  std::shared_ptr<const PyPluginClass> cls_;
  py::object instance_;
  std::array<py::object, kHookCount> methods_;
  Session* ssn_ = nullptr;
  HookBudget* budget_ = nullptr;  // the session's, or none
  std::unique_ptr<ViewCache> views_;
};

}  // namespace

std::optional<Hook> HookByName(std::string_view name) {
  for (const ExtensionPoint& p : kExtensionPoints)
    if (p.python && name == p.name) return static_cast<Hook>(p.kind);
  return std::nullopt;
}

std::vector<std::string> PythonHookNames() {
  std::vector<std::string> names;
  for (const ExtensionPoint& p : kExtensionPoints)
    if (p.python) names.push_back(p.name);
  return names;
}

PyPluginClass::~PyPluginClass() { Drop(cls); }

namespace {
thread_local std::optional<py::error_already_set> interrupt;
}  // namespace

void KeepIfInterrupt(const py::error_already_set& e) {
  if (!interrupt && !e.matches(PyExc_Exception)) interrupt = e;
}

void RaiseInterrupt() {
  if (!interrupt) return;
  py::error_already_set e = std::move(*interrupt);
  interrupt.reset();
  throw e;
}

absl::StatusOr<std::unique_ptr<Plugin>> BuildPyPlugin(const std::shared_ptr<const PyPluginClass>& cls,
                                                      const Arguments& args) {
  Gil gil;
  try {
    py::object arguments = py::module_::import("json").attr("loads")(args.raw().dump());
    py::object instance = cls->cls(arguments);
    return std::make_unique<PyPlugin>(cls, std::move(instance));
  } catch (py::error_already_set& e) {
    KeepIfInterrupt(e);
    if (e.matches(PyExc_ValueError))
      return ConfigError(absl::StrCat("plugin ", cls->name, ": ", py::str(e.value()).cast<std::string>()));
    return PluginError(cls->name, absl::StrCat("plugin \"", cls->name, "\" failed in __init__:\n", Traceback(e)));
  } catch (const std::exception& e) {
    return PluginError(cls->name, absl::StrCat("plugin \"", cls->name, "\" failed in __init__: ", e.what()));
  }
}

}  // namespace volcanic::bindings
