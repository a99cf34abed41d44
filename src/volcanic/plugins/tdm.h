// tdm's revocable zones (tdm.cc): a daily window "HH:MM-HH:MM", read as Go's
// time.Parse reads the layout "15:04" (an hour of one or two digits, 0-23;
// minutes of exactly two, 0-59), around one '-', the whole text trimmed of
// spaces first (Volcano's parseRevocableZone).
//
// Time: Volcano places the window on the current day of the scheduler's
// local clock; volcanic's is the session's virtual clock, read in UTC (a
// scheduler container runs in UTC unless told otherwise). The window runs
// from the day's start time to its end time, both inclusive to the second;
// an end at or before the start is on the next day. So, as in Volcano, a
// window across midnight ("22:00-02:00") is open from 22:00 to midnight
// only: after midnight the day, and so the window, starts again.
#pragma once

#include <cstdint>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"

namespace volcanic {

struct RevocableWindow {
  int start_min = 0, end_min = 0;  // minutes after midnight
};

// The window in `text`; InvalidArgument naming the text when it is not one.
absl::StatusOr<RevocableWindow> ParseRevocableWindow(absl::string_view text);

// The window on the (UTC) day of `now_ms`, as Unix seconds, both inclusive.
struct WindowSpan {
  int64_t start_s = 0, end_s = 0;
};
WindowSpan SpanOn(const RevocableWindow& w, int64_t now_ms);

// Whether the window is open at `now_ms` (Volcano compares whole seconds).
bool WindowOpen(const RevocableWindow& w, int64_t now_ms);

// The first instant after `now_ms` at which WindowOpen may change: the
// span's next start or the second after its end, else the next midnight.
int64_t NextWindowChangeMs(const RevocableWindow& w, int64_t now_ms);

}  // namespace volcanic
