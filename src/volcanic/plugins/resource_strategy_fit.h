// resource-strategy-fit (reference §4.6; Volcano's
// pkg/scheduler/plugins/resource-strategy-fit): the parts with numbers,
// declared here so tests can check them without a session.
//
//  - strategy score: per requested resource, MostAllocated ((used + request)
//    / allocatable) or LeastAllocated (what is left of allocatable after the
//    request), weighted, averaged over the weights and scaled by 100 x
//    `resourceStrategyFitWeight`. Resources are chosen by exact name, else by
//    the longest `prefix*` pattern; a pod may bring its own scoring type and
//    weights in annotations instead;
//  - sra (scarce-resource avoidance): a task that asks for none of the scarce
//    resources prefers nodes that have few of them;
//  - proportional: a node keeps cpu and memory in proportion to its idle
//    scarce resources for the tasks that ask for those resources.
//
// Cost: a score is O(requested dimensions); the predicate O(listed
// resources). Bad configuration is a ConfigError naming the argument.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "volcanic/api/types.h"
#include "volcanic/framework/conf.h"

namespace volcanic::resource_strategy_fit {

inline constexpr char kScoringTypeAnnotation[] = "volcano.sh/resource-strategy-scoring-type";
inline constexpr char kScoringWeightAnnotation[] = "volcano.sh/resource-strategy-weight";

// kNone: a pod's annotation names a type Volcano does not score; the
// resource's weight still counts in the average.
enum class Scoring : uint8_t { kLeastAllocated, kMostAllocated, kNone };

struct ResourceScoring {
  Scoring scoring = Scoring::kLeastAllocated;
  int64_t weight = 1;
  bool operator==(const ResourceScoring&) const = default;
};

// Configured resources by name or `prefix*` pattern.
using ScoringTable = std::map<std::string, ResourceScoring, std::less<>>;

struct StrategyArgs {
  int64_t weight = 10;     // resourceStrategyFitWeight; 0 turns the score off
  ScoringTable resources;  // default: cpu and memory, LeastAllocated, weight 1
};

struct SraArgs {
  int64_t weight = 0;  // 0 (or sra disabled): no sra score
  std::vector<std::pair<ResourceId, int64_t>> resources;
  int64_t weight_sum = 0;
};

struct Proportion {
  ResourceId resource;
  std::string name;
  double cpu = 1, memory = 1;  // cores and GB (1e9 bytes) kept per unit of the resource
};

struct Args {
  StrategyArgs strategy;
  SraArgs sra;
  std::optional<std::vector<Proportion>> proportional;  // nullopt: no predicate
};

absl::StatusOr<Args> ParseArgs(const Arguments& args);

// Volcano's isValidWildcardPattern: no `*`, or one `*` at the end of a
// longer name.
bool IsValidPattern(std::string_view pattern);
// The entry for `resource`: its exact name first, else the longest matching
// prefix pattern.
std::optional<ResourceScoring> FindScoring(std::string_view resource, const ScoringTable& table);

// One resource's term (weight x fraction); nullopt when the request does not
// fit what is left (Volcano then scores the node 0). 0 for a zero weight or
// capacity, checked first as Volcano does.
std::optional<double> MostAllocatedTerm(double requested, double used, double capacity, int64_t weight);
std::optional<double> LeastAllocatedTerm(double requested, double used, double capacity, int64_t weight);

// The configured table resolved per resource id (ids below `width`).
std::vector<std::optional<ResourceScoring>> ResolveByResourceId(const ScoringTable& table, int width);

// A pod's own scoring, from its annotations (the type, and a JSON map of
// resource name to integer weight): it replaces the configured table for
// that pod. `valid` is false when the weights are missing or malformed: the
// pod then scores 0 everywhere, as in Volcano.
struct PodScoring {
  bool valid = false;
  Scoring scoring = Scoring::kNone;
  std::vector<std::pair<ResourceId, int64_t>> weights;
};
// nullopt when the pod has no scoring-type annotation.
std::optional<PodScoring> ReadPodScoring(const TaskInfo& t);

// The strategy score of the task on the node; `by_id` from
// ResolveByResourceId, `pod` from ReadPodScoring (nullptr: none).
double StrategyScore(const TaskInfo& t, const NodeInfo& n, const StrategyArgs& args,
                     absl::Span<const std::optional<ResourceScoring>> by_id, const PodScoring* pod);
double SraScore(const TaskInfo& t, const NodeInfo& n, const SraArgs& sra);
// The failure reason when the task would leave the node short of the cpu or
// memory its idle scarce resources call for; nullopt when it may go there.
std::optional<std::string> ProportionalMisfit(const TaskInfo& t, const NodeInfo& n,
                                              absl::Span<const Proportion> proportions);

}  // namespace volcanic::resource_strategy_fit
