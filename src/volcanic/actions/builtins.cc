// The built-in actions, registered explicitly.
#include "volcanic/actions/actions.h"

namespace volcanic {

void RegisterBuiltinActions(Registry& r) {
  r.AddAction("enqueue", NewEnqueueAction);
  r.AddAction("allocate", NewAllocateAction);
  r.AddAction("backfill", NewBackfillAction);
  r.AddAction("preempt", NewPreemptAction);
  r.AddAction("reclaim", NewReclaimAction);
}

}  // namespace volcanic
