// The time budget of Python hooks (docs/plugins-python.md "Time budget"):
// per Scheduler, the wall time all Python hooks of one session may take
// together. The call that goes over fails the session with a PluginError
// naming its plugin and hook; the session is then rolled back.
//
// What is guaranteed: every hook call is measured, and the session fails at
// the end of the call that exhausts the budget. A call still running when
// the budget runs out is interrupted if it is executing Python code: a
// watchdog thread raises HookBudgetExceeded (a BaseException, so `except
// Exception` in the hook does not swallow it) in the hook's thread. A hook
// blocked in C (time.sleep, a socket read, a C extension holding the GIL)
// cannot be interrupted: it fails when it returns.
// Cost: without a budget, nothing. With one, two clock reads and a mutex
// hand-off per call; one idle thread per Scheduler.
#pragma once

#include <pybind11/pybind11.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>

namespace volcanic::bindings {

namespace py = pybind11;
using Clock = std::chrono::steady_clock;

// Raises HookBudgetExceeded in a thread running a hook past its deadline.
class Watchdog {
 public:
  Watchdog();
  ~Watchdog();  // call without the GIL
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // With the GIL, in the hook's thread.
  void Arm(Clock::time_point deadline);
  // With the GIL, in the hook's thread: whether it fired (a pending
  // exception not yet raised is cleared).
  bool Disarm();

 private:
  void Run();

  std::mutex mu_;
  std::condition_variable cv_;
  bool armed_ = false, fired_ = false, stop_ = false, idle_ = false;
  uint64_t generation_ = 0;
  unsigned long thread_id_ = 0;
  Clock::time_point deadline_;
  std::thread thread_;
};

// One Scheduler's budget and what its current session has used.
struct HookBudget {
  Clock::duration limit{};
  Clock::duration used{};
  std::unique_ptr<Watchdog> watchdog;
};

// The budget of the session running on this thread (nullptr: none), set by
// the Scheduler around a session.
HookBudget* CurrentHookBudget();
class ScopedHookBudget {
 public:
  explicit ScopedHookBudget(HookBudget* budget);
  ~ScopedHookBudget();
};

// Times one hook call against the budget (nothing without one). Construct
// and Stop with the GIL.
class HookClock {
 public:
  explicit HookClock(HookBudget* budget);
  ~HookClock() { Stop(); }
  // Ends the call (idempotent): whether the budget is exhausted.
  bool Stop();

 private:
  HookBudget* budget_;
  Clock::time_point start_;
  bool stopped_ = false, over_ = false;
};

// The exception type the watchdog raises: volcanic._core.HookBudgetExceeded.
void BindHookBudget(py::module_& m);

}  // namespace volcanic::bindings
