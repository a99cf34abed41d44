// The built-in actions, registered explicitly.
#include "volcanic/actions/actions.h"

#include "volcanic/api/status_macros.h"
#include "volcanic/framework/registry.h"

namespace volcanic {

absl::Status RegisterBuiltinActions(Registry& r) {
  RETURN_IF_ERROR(r.AddAction("enqueue", NewEnqueueAction));
  RETURN_IF_ERROR(r.AddAction("allocate", NewAllocateAction));
  RETURN_IF_ERROR(r.AddAction("backfill", NewBackfillAction));
  RETURN_IF_ERROR(r.AddAction("preempt", NewPreemptAction));
  RETURN_IF_ERROR(r.AddAction("reclaim", NewReclaimAction));
  RETURN_IF_ERROR(r.AddAction("gangpreempt", NewGangPreemptAction));
  RETURN_IF_ERROR(r.AddAction("gangreclaim", NewGangReclaimAction));
  RETURN_IF_ERROR(r.AddAction("shuffle", NewShuffleAction));
  return absl::OkStatus();
}

}  // namespace volcanic
