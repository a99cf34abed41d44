#include "volcanic/framework/scheduler.h"

#include "absl/strings/str_cat.h"
#include "volcanic/api/status_macros.h"
#include "volcanic/framework/session.h"

namespace volcanic {

absl::StatusOr<Decisions> Scheduler::RunOnce(int64_t now_ms, bool changed_only) {
  Decisions out;
  // Session UIDs are sequential rather than random so runs are repeatable.
  Session ssn(cache_, conf_, {now_ms, absl::StrCat("session-", ++sessions_), changed_only});
  RETURN_IF_ERROR(ssn.Open());
  ssn.RunActions(&out);
  ssn.Close(&out);
  return out;
}

}  // namespace volcanic
