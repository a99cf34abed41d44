#include "volcanic/framework/scheduler.h"

#include "absl/strings/str_cat.h"
#include "volcanic/api/status_macros.h"
#include "volcanic/framework/session.h"

namespace volcanic {

absl::StatusOr<Decisions> Scheduler::RunOnce(int64_t now_ms, bool changed_only, bool timings, bool metrics) {
  Decisions out;
  // Session UIDs are sequential rather than random so runs are repeatable.
  Session ssn(cache_, conf_,
              {now_ms, absl::StrCat("session-", ++sessions_), changed_only, node_memory_.get(), timings, metrics,
               features_},
              registry_);
  absl::Status status = ssn.Open();
  if (status.ok()) {
    ssn.RunActions(&out);  // none after a plugin failure
    ssn.Close(&out);       // after a failure: undoes the whole session
    status = ssn.failure();
  }
  if (!status.ok()) {
    // The session left no trace, so the next one takes its uid: decisions
    // (conditions' transitionID) are those of a scheduler that never ran it.
    --sessions_;
    return status;
  }
  if (changed_only) AssumeStatus(out);
  return out;
}

void Scheduler::AssumeStatus(const Decisions& d) {
  for (const auto& [key, st] : d.podgroups) {
    JobInfo* job = cache_.FindJob(key);
    if (!job) continue;
    job->status_phase = st.phase;
    job->status_conditions = st.conditions;
    job->status_counts = {st.running, st.succeeded, st.failed};
    job->status_known = true;
  }
  for (const auto& [name, allocated] : d.queue_allocated)
    if (QueueInfo* q = cache_.FindQueue(name)) q->status_allocated = allocated;
}

void Scheduler::ForgetStatus(const std::string& kind, const std::string& key) {
  if (kind == "PodGroup") {
    if (JobInfo* job = cache_.FindJob(key)) job->status_known = false;
  } else if (kind == "Queue") {
    if (QueueInfo* q = cache_.FindQueue(key)) q->status_allocated.reset();
  }
}

}  // namespace volcanic
