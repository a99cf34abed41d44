#include "volcanic/bindings/hook_budget.h"

#include "volcanic/bindings/convert.h"

namespace volcanic::bindings {
namespace {

thread_local HookBudget* current_budget = nullptr;
PyObject* budget_exceeded = nullptr;  // the exception type, owned by the module

}  // namespace

Watchdog::Watchdog() : thread_([this] { Run(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

// Deadlines never move earlier (each is the previous one plus the time
// between two calls, and a new session starts later with a full budget), so
// a watchdog already waiting for one needs no wake-up: it re-checks when it
// expires. Only an idle watchdog is notified.
void Watchdog::Arm(Clock::time_point deadline) {
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    armed_ = true;
    fired_ = false;
    ++generation_;
    thread_id_ = PyThread_get_thread_ident();
    deadline_ = deadline;
    wake = idle_;
  }
  if (wake) cv_.notify_all();
}

bool Watchdog::Disarm() {
  bool fired;
  {
    std::lock_guard<std::mutex> lock(mu_);
    armed_ = false;
    fired = fired_;
  }
  // Fired after the hook's last bytecode: the exception is still pending.
  if (fired) PyThreadState_SetAsyncExc(PyThread_get_thread_ident(), nullptr);
  return fired;
}

// Lock order: the GIL, then mu_. The hook's thread holds the GIL from Arm to
// Disarm except while its Python code lets it go, so when this thread has the
// GIL and finds the same generation armed, the hook is still running.
void Watchdog::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (!armed_ || fired_) {
      idle_ = true;
      cv_.wait(lock);
      idle_ = false;
      continue;
    }
    if (Clock::now() < deadline_) {
      cv_.wait_until(lock, deadline_);
      continue;
    }
    uint64_t generation = generation_;
    lock.unlock();
    if (!InterpreterAlive()) return;
    PyGILState_STATE gil = PyGILState_Ensure();
    lock.lock();
    if (armed_ && generation_ == generation) {
      PyThreadState_SetAsyncExc(thread_id_, budget_exceeded);
      fired_ = true;
    }
    lock.unlock();
    PyGILState_Release(gil);
    lock.lock();
  }
}

HookBudget* CurrentHookBudget() { return current_budget; }
ScopedHookBudget::ScopedHookBudget(HookBudget* budget) {
  if (budget) budget->used = Clock::duration::zero();
  current_budget = budget;
}
ScopedHookBudget::~ScopedHookBudget() { current_budget = nullptr; }

HookClock::HookClock(HookBudget* budget) : budget_(budget) {
  if (!budget_) return;
  start_ = Clock::now();
  budget_->watchdog->Arm(start_ + (budget_->limit - budget_->used));
}

bool HookClock::Stop() {
  if (!budget_ || stopped_) return over_;
  stopped_ = true;
  bool fired = budget_->watchdog->Disarm();
  budget_->used += Clock::now() - start_;
  over_ = fired || budget_->used > budget_->limit;
  return over_;
}

void BindHookBudget(py::module_& m) {
  budget_exceeded = PyErr_NewExceptionWithDoc(
      "volcanic._core.HookBudgetExceeded",
      "Raised inside a Python scheduler hook that ran past its Scheduler's python_hook_budget.",
      PyExc_BaseException, nullptr);
  m.attr("HookBudgetExceeded") = py::reinterpret_borrow<py::object>(budget_exceeded);
}

}  // namespace volcanic::bindings
