// Factories of the built-in actions (reference §4.3), one .cc each.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "volcanic/framework/plugin.h"

namespace volcanic {

using ActionOr = absl::StatusOr<std::unique_ptr<Action>>;

ActionOr NewEnqueueAction(const Arguments& args);
ActionOr NewAllocateAction(const Arguments& args);
ActionOr NewBackfillAction(const Arguments& args);
ActionOr NewPreemptAction(const Arguments& args);
ActionOr NewReclaimAction(const Arguments& args);
ActionOr NewGangPreemptAction(const Arguments& args);  // gang_evict.cc
ActionOr NewGangReclaimAction(const Arguments& args);
ActionOr NewShuffleAction(const Arguments& args);  // shuffle.cc

}  // namespace volcanic
