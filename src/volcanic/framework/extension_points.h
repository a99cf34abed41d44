// The extension points a plugin may register (through its PluginHandle,
// plugin_handle.h), and what each callback must promise. The session
// combines the callbacks of all plugins across tiers by the rules of tiers.h;
// a callback that breaks its promise makes the session's decisions wrong or
// non-deterministic, it is not detected.
//
// Promises common to every callback:
//  - it is called only while its session is open, on the session's thread,
//    and may be called any number of times in any order (a sort calls an
//    order many times): it must not change the objects it is given, and an
//    answer may depend only on its arguments and the plugin's own state;
//  - the plugin's own state may change only in its event handlers
//    (on_allocate / on_deallocate), so two calls with the same arguments
//    between two events answer the same;
//  - it must be cheap: predicates and scores are called per node.
//  - to fail, it calls Session::Fail with a PluginError and answers the
//    neutral value given below; the session then stops and is rolled back.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "volcanic/api/types.h"

namespace volcanic {

struct ValidateResult {
  bool pass = true;
  std::string reason, message;
};

// Orders (job, task, queue): <0 puts l first, >0 puts r first, 0 abstains
// (the next plugin decides; when all abstain, creation time then UID).
// Must be a strict weak order: fn(a, a) == 0; fn(a, b) and fn(b, a) have
// opposite signs (or are both 0); transitive: if a goes before b and b
// before c then a goes before c, and "no opinion" (0) is transitive too.
// Otherwise (a random answer, or a score that changes while a queue is
// ordered) the actions still get some order of the objects (framework/heap.h
// never leaves its range), but not a meaningful or reproducible one.
// Neutral answer: 0.
using JobOrderFn = std::function<int(const JobInfo&, const JobInfo&)>;
using TaskOrderFn = std::function<int(const TaskInfo&, const TaskInfo&)>;
using QueueOrderFn = std::function<int(const QueueInfo&, const QueueInfo&)>;
// Orders the queues of two victims for a preemptor's queue (<0: l's victims
// first); the same rules as the orders above, for a fixed `preemptor`.
using VictimQueueOrderFn = std::function<int(const QueueInfo& l, const QueueInfo& r, const QueueInfo& preemptor)>;
// JobValid: nullopt or pass=true when the job may be scheduled; else the
// reason and message written to the PodGroup. Neutral answer: nullopt.
using JobValidFn = std::function<std::optional<ValidateResult>(const JobInfo&)>;
// JobReady (AND over plugins; neutral true) and JobStarving (the first tier
// with a callback decides; neutral false).
using JobPredicateFn = std::function<bool(const JobInfo&)>;
// JobPipelined, JobEnqueueable: kPermit (1), kAbstain (0) or kReject (-1)
// (tiers.h Vote). Neutral answer: kAbstain.
using JobVoteFn = std::function<int(const JobInfo&)>;
// JobEnqueued: told that enqueue admitted the job (to reserve its share).
using JobEnqueuedFn = std::function<void(const JobInfo&)>;
// Overused (OR over plugins): the queue may not take more. Neutral: false.
using OverusedFn = std::function<bool(const QueueInfo&)>;
// Allocatable and Preemptive (AND over plugins): the queue may take the
// task's resources (Preemptive: by reclaiming from other queues). Neutral: true.
using AllocatableFn = std::function<bool(const QueueInfo&, const TaskInfo&)>;
// PrePredicate: OK, or an error whose message is the task's reason; checked
// once per task before any node.
using PrePredicateFn = std::function<absl::Status(const TaskInfo&)>;
// kube-scheduler's filter outcomes: evicting pods may resolve kUnschedulable
// (resources, pod count, ports, anti-affinity of placed pods), never
// kUnresolvable (selectors, taints, an unschedulable node).
enum class Verdict : uint8_t { kFit, kUnschedulable, kUnresolvable };
// Predicate: whether the task fits the node (resources are the session's to
// check, not a predicate's). On a misfit appends at least one reason, in
// kube-scheduler's words ("node(s) didn't match ..."): the reasons are
// counted per node into the unschedulable message. Neutral answer: kFit.
using PredicateFn = std::function<Verdict(const TaskInfo&, const NodeInfo&, std::vector<std::string>*)>;
// NodeOrder: a finite score, higher is better; scores of all plugins add up.
// Neutral answer: 0.
using NodeOrderFn = std::function<double(const TaskInfo&, const NodeInfo&)>;
// BatchNodeOrder: adds each node's finite score to (*scores)[i] (never
// resizes it). Neutral answer: adds nothing.
using BatchNodeOrderFn =
    std::function<void(const TaskInfo&, absl::Span<NodeInfo* const>, std::vector<double>*)>;
// Preemptable, Reclaimable: nullopt abstains; otherwise the victims the
// plugin allows, a subset of the candidates. An empty list is a veto: within
// the first tier where some plugin answers, the answers are intersected
// (tiers.h Victims), so an empty answer means no victim at all. Neutral
// answer: nullopt.
using EvictableFn = std::function<std::optional<std::vector<TaskInfo*>>(
    const TaskInfo&, const std::vector<TaskInfo*>&)>;
// UnifiedEvictable: the victims gangpreempt and gangreclaim may take
// (Volcano's UnifiedEvictableFn), told what is evicting: combined as
// Preemptable, without a flag (as in Volcano). Neutral answer: nullopt.
enum class EvictionKind : uint8_t { kGangPreempt, kGangReclaim };
struct EvictionContext {
  EvictionKind kind;
  const JobInfo* job;  // the preemptor's or reclaimer's job
  int hypernode;       // the domain the victims are on (a HyperNodeTree index)
};
using UnifiedEvictableFn = std::function<std::optional<std::vector<TaskInfo*>>(const EvictionContext&,
                                                                               const std::vector<TaskInfo*>&)>;
// VictimTasks: the tasks the plugin wants evicted now (the shuffle action's
// question), from the candidates it is offered (Running tasks) or of its own
// choosing (tdm names pods on closed revocable zones). Within the first tier
// where some callback names a victim, the answers are united. Neutral
// answer: no victim. Asked once per shuffle, it may record that it was
// asked (tdm keeps when it last looked, in the Cache).
using VictimTasksFn = std::function<std::vector<TaskInfo*>(const std::vector<TaskInfo*>&)>;
// Event handlers: the task was placed (allocated or pipelined, or its
// eviction undone) or released (evicted, or its placement undone). Every
// on_allocate is matched by an on_deallocate if the session undoes it.
// An on_allocate handler may refuse the placement it is told of (Volcano's
// Event.Err) by calling Session::RefusePlacement: once every handler has
// run, the session undoes the placement (calling every on_deallocate) and
// the Statement's Allocate or Pipeline fails. Only a Statement's placement
// can be refused; a refusal of an undone eviction or of backfill's
// allocation is ignored, as in Volcano.
using TaskEventFn = std::function<void(const TaskInfo&)>;
// Reserve: the task is about to be placed on the node (allocated or
// pipelined): the plugin takes what the task will hold there (vGPU cards,
// volumes), writing it on the task. Unreserve: that placement was undone
// (the task is off its node): the plugin gives back what it took. Called in
// tier order, never for an eviction or its undoing.
using ReserveFn = std::function<void(TaskInfo&, const NodeInfo&)>;
using UnreserveFn = std::function<void(TaskInfo&)>;
// CardChoice: the vGPU cards a plugin would give the task on the node, which
// deviceshare asks before its own card order; nullopt leaves the choice to
// it. The first answer in tier order wins; it must fit (vgpu.h FitGpus).
using CardChoiceFn = std::function<std::optional<GpuGrants>(const TaskInfo&, const NodeInfo&)>;
// Whether a predicate or score depends only on the task's class (requests
// and placement constraints) and the node itself, so results may be cached
// per class and refreshed only for nodes that change (node_search.h). A
// plugin that answers true for a task and then depends on anything else
// makes the session pick stale nodes. Nullptr: never node-local.
using NodeLocalFn = std::function<bool(const TaskInfo&)>;

// Network topology (framework/topology.h). HyperNodeGradient: the HyperNodes
// under `hypernode` (an index in the session's HyperNodeTree) where the gang
// may go, grouped by tier, lowest tier first; the search takes the first group
// where the gang fits. nullopt abstains (the default is {{hypernode}}); an
// empty list means nowhere. HyperNodeOrder: adds a finite score per candidate
// HyperNode to (*scores)[i] (never resizes it); higher is better.
enum class SearchPurpose : uint8_t { kAllocate, kEvict };
using HyperNodeGradients = std::vector<std::vector<int>>;
struct TopologyUnit;
using HyperNodeGradientFn =
    std::function<std::optional<HyperNodeGradients>(const TopologyUnit&, int hypernode, SearchPurpose)>;
using HyperNodeOrderFn = std::function<void(const TopologyUnit&, absl::Span<const int>, std::vector<double>*)>;
// A job's gangs (Volcano's sub-jobs; topology.h TopologyUnit), asked only for
// jobs with a subGroupPolicy: SubJobReady (AND; neutral true), SubJobPipelined
// (a vote; neutral kAbstain) and SubJobOrder (as the orders above).
using SubJobPredicateFn = std::function<bool(const TopologyUnit&)>;
using SubJobVoteFn = std::function<int(const TopologyUnit&)>;
using SubJobOrderFn = std::function<int(const TopologyUnit&, const TopologyUnit&)>;

// How the session combines the answers of the plugins that define a point
// (tiers.h): the rule each combined Session method applies.
enum class Combination : uint8_t {
  kFirstNonZero,   // orders: the first plugin, tier by tier, with an opinion
  kFirstFailure,   // job_valid: the first failed validation
  kAllTrue,        // every plugin agrees (neutral true)
  kAnyTrue,        // some plugin says so (neutral false)
  kFirstTierAll,   // the first tier with a callback decides, all of it agreeing
  kVote,           // the first tier with a permit or a reject (tiers.h Vote)
  kEach,           // every callback is called (notifications)
  kAllOk,          // every callback returns OK; the first error is the answer
  kAllFit,         // every predicate fits; the first misfit ends the check
  kSum,            // scores add up
  kVictims,        // within the first tier that answers, the answers intersect
  kFirstAnswer,    // the first plugin, in tier order, that answers
  // VictimTasks: within the first tier where some callback names a victim,
  // the answers are united (kVictims intersects, and an empty answer there
  // is a veto; here it is only "nothing to evict").
  kFirstTierUnion,
};

// The extension points, one line each:
//   X(Name, field, Type, enable_flag, combination, python)
// Name gives HookKind::k<Name> and PluginHandle::Add<Name>Fn; Type is the
// callback's type (above); `field` is the
// PluginSlot member, the name in Decisions::plugin_timings and, when
// `python`, the method a Python plugin defines (docs/plugins-python.md);
// `enable_flag` is the tier option that turns the point off for a plugin
// (nullptr: none); `combination` is how the session combines the answers.
// Adding a point is one line here plus its combined Session method.
#define VOLCANIC_EXTENSION_POINTS(X)                                                                \
  X(JobOrder, job_order, JobOrderFn, "enableJobOrder", kFirstNonZero, true)                         \
  X(TaskOrder, task_order, TaskOrderFn, "enableTaskOrder", kFirstNonZero, true)                     \
  X(QueueOrder, queue_order, QueueOrderFn, "enableQueueOrder", kFirstNonZero, true)                 \
  X(VictimQueueOrder, victim_queue_order, VictimQueueOrderFn, nullptr, kFirstNonZero, false)        \
  X(JobValid, job_valid, JobValidFn, nullptr, kFirstFailure, false)                                 \
  X(JobReady, job_ready, JobPredicateFn, "enableJobReady", kAllTrue, true)                          \
  X(JobPipelined, job_pipelined, JobVoteFn, "enableJobPipelined", kVote, true)                      \
  X(JobStarving, job_starving, JobPredicateFn, "enableJobStarving", kFirstTierAll, false)           \
  X(JobEnqueueable, job_enqueueable, JobVoteFn, "enableJobEnqueued", kVote, true)                   \
  X(JobEnqueued, job_enqueued, JobEnqueuedFn, "enableJobEnqueued", kEach, false)                    \
  X(Overused, overused, OverusedFn, "enabledOverused", kAnyTrue, true)                              \
  X(Allocatable, allocatable, AllocatableFn, "enabledAllocatable", kAllTrue, false)                 \
  X(Preemptive, preemptive, AllocatableFn, "enablePreemptive", kAllTrue, false)                     \
  X(PrePredicate, pre_predicate, PrePredicateFn, "enablePredicate", kAllOk, false)                  \
  X(Predicate, predicate, PredicateFn, "enablePredicate", kAllFit, true)                            \
  X(NodeOrder, node_order, NodeOrderFn, "enableNodeOrder", kSum, true)                              \
  X(BatchNodeOrder, batch_node_order, BatchNodeOrderFn, "enableNodeOrder", kSum, true)              \
  X(Preemptable, preemptable, EvictableFn, "enablePreemptable", kVictims, true)                     \
  X(Reclaimable, reclaimable, EvictableFn, "enableReclaimable", kVictims, true)                     \
  X(UnifiedEvictable, unified_evictable, UnifiedEvictableFn, nullptr, kVictims, false)             \
  X(VictimTasks, victim_tasks, VictimTasksFn, "enabledVictim", kFirstTierUnion, false)             \
  X(OnAllocate, on_allocate, TaskEventFn, nullptr, kEach, true)                                     \
  X(OnDeallocate, on_deallocate, TaskEventFn, nullptr, kEach, true)                                 \
  X(Reserve, reserve, ReserveFn, nullptr, kEach, false)                                             \
  X(Unreserve, unreserve, UnreserveFn, nullptr, kEach, false)                                       \
  X(CardChoice, card_choice, CardChoiceFn, nullptr, kFirstAnswer, false)                           \
  X(HyperNodeGradient, hypernode_gradient, HyperNodeGradientFn, "enabledHyperNodeGradient", kFirstAnswer, false) \
  X(HyperNodeOrder, hypernode_order, HyperNodeOrderFn, "enabledHyperNodeOrder", kSum, false)      \
  X(SubJobReady, subjob_ready, SubJobPredicateFn, "enabledSubJobReady", kAllTrue, false)             \
  X(SubJobPipelined, subjob_pipelined, SubJobVoteFn, "enabledSubJobPipelined", kVote, false)         \
  X(SubJobOrder, subjob_order, SubJobOrderFn, "enabledSubJobOrder", kFirstNonZero, false)

// The extension points by kind (for timing, Decisions::plugin_timings), and
// the plugin's own session hooks after them.
enum class HookKind : uint8_t {
#define VOLCANIC_HOOK_KIND(Name, field, Fn, flag, combination, python) k##Name,
  VOLCANIC_EXTENSION_POINTS(VOLCANIC_HOOK_KIND)
#undef VOLCANIC_HOOK_KIND
  kOnSessionOpen,
  kOnSessionClose,
  kCount
};
inline constexpr size_t kHookKinds = static_cast<size_t>(HookKind::kCount);

// What the table says of one point (and of the two session hooks, which
// Python plugins define too).
struct ExtensionPoint {
  HookKind kind;
  const char* name;
  const char* enable_flag;
  Combination combination;
  bool python;
};
inline constexpr std::array<ExtensionPoint, kHookKinds> kExtensionPoints = {{
#define VOLCANIC_POINT(Name, field, Fn, flag, combination, python) \
  {HookKind::k##Name, #field, flag, Combination::combination, python},
    VOLCANIC_EXTENSION_POINTS(VOLCANIC_POINT)
#undef VOLCANIC_POINT
    {HookKind::kOnSessionOpen, "on_session_open", nullptr, Combination::kEach, true},
    {HookKind::kOnSessionClose, "on_session_close", nullptr, Combination::kEach, true},
}};

constexpr bool PointsInKindOrder() {
  for (size_t i = 0; i < kHookKinds; ++i)
    if (static_cast<size_t>(kExtensionPoints[i].kind) != i) return false;
  return true;
}
static_assert(PointsInKindOrder(), "kExtensionPoints is indexed by HookKind");

// The name in Decisions ("job_order", ...; the Python hook's name where
// there is one).
inline const char* HookKindName(HookKind kind) { return kExtensionPoints[static_cast<size_t>(kind)].name; }

}  // namespace volcanic
