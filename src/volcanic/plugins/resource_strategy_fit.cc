// resource-strategy-fit (reference §4.6): per-resource MostAllocated or
// LeastAllocated scoring, scarce-resource avoidance (sra) and the
// proportional predicate; the numbers are in resource_strategy_fit.h.
#include "volcanic/plugins/resource_strategy_fit.h"

#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "volcanic/api/errors.h"
#include "volcanic/api/status_macros.h"
#include "volcanic/framework/session.h"
#include "volcanic/plugins/plugins.h"

namespace volcanic {
namespace resource_strategy_fit {
namespace {

constexpr char kOwner[] = "plugin resource-strategy-fit";
constexpr double kMaxNodeScore = 100;  // kube-scheduler's MaxNodeScore

// The map argument `key` of `args` as Arguments of its own (empty when
// absent), so its entries are checked like top-level ones.
absl::StatusOr<Arguments> Nested(const Arguments& args, const std::string& key) {
  if (!args.Has(key) || args.raw().at(key).is_null()) return Arguments(json::object(), kOwner);
  const json& v = args.raw().at(key);
  if (!v.is_object()) return ConfigError(absl::StrCat(kOwner, ": argument ", key, " must be a map, got ", v.dump()));
  return Arguments(v, absl::StrCat(kOwner, " argument ", key));
}

// The comma-separated names of a `resources` string, trimmed, empties skipped.
std::vector<std::string> ResourceList(const std::string& text) {
  std::vector<std::string> out;
  for (absl::string_view name : absl::StrSplit(text, ',', absl::SkipWhitespace()))
    out.emplace_back(absl::StripAsciiWhitespace(name));
  return out;
}

absl::StatusOr<StrategyArgs> ParseStrategy(const Arguments& args) {
  StrategyArgs out;
  ASSIGN_OR_RETURN(int64_t weight, args.Int("resourceStrategyFitWeight", 10));
  out.weight = weight < 0 ? 10 : weight;  // Volcano's default for a negative weight
  ASSIGN_OR_RETURN(Arguments resources, Nested(args, "resources"));
  for (const auto& [name, value] : resources.raw().items()) {
    // Volcano drops such a pattern with a warning; refused here, as it would
    // otherwise do nothing unseen.
    if (!IsValidPattern(name))
      return ConfigError(absl::StrCat(kOwner, ": resource pattern \"", name,
                                      "\" is not supported: only one trailing '*' after a prefix (cloudml.gpu/*)"));
    ASSIGN_OR_RETURN(Arguments entry, Nested(resources, name));
    RETURN_IF_ERROR(entry.CheckKnown({"type", "weight"}));
    ASSIGN_OR_RETURN(std::string type, entry.String("type", "LeastAllocated"));
    ASSIGN_OR_RETURN(int64_t w, entry.Int("weight", 1));
    ResourceScoring scoring{Scoring::kLeastAllocated, w <= 0 ? 1 : w};
    if (type == "MostAllocated") {
      scoring.scoring = Scoring::kMostAllocated;
    } else if (type != "LeastAllocated") {  // Volcano falls back to LeastAllocated unseen
      return ConfigError(absl::StrCat(kOwner, ": resource ", name, ": type must be LeastAllocated or MostAllocated, got \"",
                                      type, "\""));
    }
    out.resources[name] = scoring;
  }
  if (out.resources.empty()) out.resources = {{"cpu", {}}, {"memory", {}}};
  return out;
}

absl::StatusOr<SraArgs> ParseSra(const Arguments& args) {
  SraArgs out;
  ASSIGN_OR_RETURN(Arguments sra, Nested(args, "sra"));
  RETURN_IF_ERROR(sra.CheckKnown({"enable", "resources", "weight", "resourceWeight"}));
  ASSIGN_OR_RETURN(bool enable, sra.Bool("enable", false));
  ASSIGN_OR_RETURN(std::string names, sra.String("resources", ""));
  ASSIGN_OR_RETURN(int64_t weight, sra.Int("weight", 0));
  ASSIGN_OR_RETURN(Arguments weights, Nested(sra, "resourceWeight"));
  if (!enable) return out;
  out.weight = weight;
  for (const std::string& name : ResourceList(names)) {
    ASSIGN_OR_RETURN(int64_t w, weights.Int(name, 1));
    if (w < 0) w = 1;
    out.resources.emplace_back(ResourceNames::Intern(name), w);
    out.weight_sum += w;
  }
  return out;
}

absl::StatusOr<std::optional<std::vector<Proportion>>> ParseProportional(const Arguments& args) {
  ASSIGN_OR_RETURN(Arguments cfg, Nested(args, "proportional"));
  RETURN_IF_ERROR(cfg.CheckKnown({"enable", "resources", "resourceProportion"}));
  ASSIGN_OR_RETURN(bool enable, cfg.Bool("enable", false));
  ASSIGN_OR_RETURN(std::string names, cfg.String("resources", ""));
  ASSIGN_OR_RETURN(Arguments rates, Nested(cfg, "resourceProportion"));
  if (!enable) return std::nullopt;
  std::vector<Proportion> out;
  for (const std::string& name : ResourceList(names)) {
    ASSIGN_OR_RETURN(double cpu, rates.Float(name + ".cpu", 1));
    ASSIGN_OR_RETURN(double memory, rates.Float(name + ".memory", 1));
    // Volcano keeps the same resource once (a map) and resets negative rates to 1.
    std::erase_if(out, [&](const Proportion& p) { return p.name == name; });
    out.push_back({ResourceNames::Intern(name), name, cpu < 0 ? 1 : cpu, memory < 0 ? 1 : memory});
  }
  return out;
}

}  // namespace

absl::StatusOr<Args> ParseArgs(const Arguments& args) {
  RETURN_IF_ERROR(args.CheckKnown({"resourceStrategyFitWeight", "resources", "sra", "proportional"}));
  Args out;
  ASSIGN_OR_RETURN(out.strategy, ParseStrategy(args));
  ASSIGN_OR_RETURN(out.sra, ParseSra(args));
  ASSIGN_OR_RETURN(out.proportional, ParseProportional(args));
  return out;
}

bool IsValidPattern(std::string_view pattern) {
  size_t star = pattern.find('*');
  if (star == std::string_view::npos) return true;
  return pattern.size() > 1 && star == pattern.size() - 1;
}

std::optional<ResourceScoring> FindScoring(std::string_view resource, const ScoringTable& table) {
  if (auto it = table.find(resource); it != table.end()) return it->second;
  std::optional<ResourceScoring> best;
  size_t best_len = 0;
  for (const auto& [pattern, scoring] : table) {
    if (pattern.empty() || pattern.back() != '*') continue;
    std::string_view prefix(pattern.data(), pattern.size() - 1);
    // Strictly longer wins, as Volcano's; patterns are distinct, so equal
    // lengths cannot both match.
    if (resource.starts_with(prefix) && (!best || prefix.size() > best_len)) {
      best = scoring;
      best_len = prefix.size();
    }
  }
  return best;
}

std::optional<double> MostAllocatedTerm(double requested, double used, double capacity, int64_t weight) {
  if (weight == 0 || capacity == 0) return 0.0;
  double after = requested + used;
  if (after > capacity) return std::nullopt;
  return after * static_cast<double>(weight) / capacity;
}

std::optional<double> LeastAllocatedTerm(double requested, double used, double capacity, int64_t weight) {
  if (weight == 0 || capacity == 0) return 0.0;
  double after = requested + used;
  if (after > capacity) return std::nullopt;
  return (capacity - after) * static_cast<double>(weight) / capacity;
}

std::vector<std::optional<ResourceScoring>> ResolveByResourceId(const ScoringTable& table, int width) {
  std::vector<std::optional<ResourceScoring>> out(width);
  for (int id = 0; id < width; ++id) out[id] = FindScoring(ResourceNames::Name(id), table);
  return out;
}

std::optional<PodScoring> ReadPodScoring(const TaskInfo& t) {
  auto type = t.annotations.find(kScoringTypeAnnotation);
  if (type == t.annotations.end() || type->second.empty()) return std::nullopt;
  PodScoring out;
  out.scoring = type->second == "MostAllocated"    ? Scoring::kMostAllocated
                : type->second == "LeastAllocated" ? Scoring::kLeastAllocated
                                                   : Scoring::kNone;
  auto text = t.annotations.find(kScoringWeightAnnotation);
  if (text == t.annotations.end() || text->second.empty()) return out;
  json weights = json::parse(text->second, nullptr, /*allow_exceptions=*/false);
  if (weights.is_null()) {  // Go decodes "null" into no weights at all
    out.valid = true;
    return out;
  }
  if (!weights.is_object()) return out;  // malformed (discarded) or not a map
  for (const auto& [name, w] : weights.items()) {
    if (!w.is_number_integer()) return out;  // Go's int decoding refuses 1.5 and "1"
    if (ResourceId id = ResourceNames::Find(name); id >= 0) out.weights.emplace_back(id, w.get<int64_t>());
  }
  out.valid = true;
  return out;
}

double StrategyScore(const TaskInfo& t, const NodeInfo& n, const StrategyArgs& args,
                     absl::Span<const std::optional<ResourceScoring>> by_id, const PodScoring* pod) {
  if (pod && !pod->valid) return 0;
  double score = 0;
  int64_t weight_sum = 0;
  for (ResourceId id = 0; id < t.resreq.Size(); ++id) {
    int64_t request = t.resreq.Get(id);
    if (request <= 0) continue;  // Volcano's ResourceNames: requested dimensions only
    std::optional<ResourceScoring> rs;
    if (pod) {
      for (const auto& [r, w] : pod->weights)
        if (r == id) rs = ResourceScoring{pod->scoring, w};
    } else {
      rs = id < static_cast<int>(by_id.size()) ? by_id[id] : FindScoring(ResourceNames::Name(id), args.resources);
    }
    if (!rs) continue;
    auto req = static_cast<double>(request), used = static_cast<double>(n.used.Get(id)),
         cap = static_cast<double>(n.allocatable.Get(id));
    std::optional<double> term = 0.0;
    if (rs->scoring == Scoring::kMostAllocated) term = MostAllocatedTerm(req, used, cap, rs->weight);
    if (rs->scoring == Scoring::kLeastAllocated) term = LeastAllocatedTerm(req, used, cap, rs->weight);
    if (!term) return 0;  // the node cannot take the request
    score += *term;
    weight_sum += rs->weight;
  }
  if (weight_sum > 0) score /= static_cast<double>(weight_sum);
  return score * kMaxNodeScore * static_cast<double>(args.weight);
}

double SraScore(const TaskInfo& t, const NodeInfo& n, const SraArgs& sra) {
  // A node without some requested resource is not sra's to rank.
  for (ResourceId id = 0; id < t.resreq.Size(); ++id)
    if (t.resreq.Get(id) > 0 && n.allocatable.Get(id) == 0) return 0;
  double score = 0;
  for (const auto& [r, w] : sra.resources)
    if (n.allocatable.Get(r) > 0) score += static_cast<double>(w);
  if (sra.weight_sum > 0) score = 1.0 - score / static_cast<double>(sra.weight_sum);
  return score * kMaxNodeScore * static_cast<double>(sra.weight);
}

std::optional<std::string> ProportionalMisfit(const TaskInfo& t, const NodeInfo& n,
                                              absl::Span<const Proportion> proportions) {
  for (const Proportion& p : proportions)
    if (t.resreq.Get(p.resource) > 0) return std::nullopt;  // it asks for the scarce resource itself
  const double idle_cpu = static_cast<double>(n.idle.Get(kCpu) - t.resreq.Get(kCpu));
  const double idle_mem = static_cast<double>(n.idle.Get(kMemory) - t.resreq.Get(kMemory));
  for (const Proportion& p : proportions) {
    // Volcano checks resources the node lists; a dimension that reads 0 both
    // in allocatable and idle is taken as not listed.
    if (n.allocatable.Get(p.resource) == 0 && n.idle.Get(p.resource) == 0) continue;
    // Scarce resources are in milli-units, so a rate of 1 keeps one core
    // (1000 millicores) and 1e9 bytes per unit.
    auto idle = static_cast<double>(n.idle.Get(p.resource));
    if (idle_cpu < idle * p.cpu || idle_mem < idle * p.memory * 1e6)
      return absl::StrCat("proportional of resource ", p.name, " check failed");
  }
  return std::nullopt;
}

namespace {

class ResourceStrategyFitPlugin : public Plugin {
 public:
  explicit ResourceStrategyFitPlugin(Args args) : args_(std::move(args)) {}

  void OnSessionOpen(PluginHandle& h) override {
    pod_scoring_.clear();
    if (args_.proportional) {
      h.AddPredicateFn([this](const TaskInfo& t, const NodeInfo& n, std::vector<std::string>* reasons) {
        auto misfit = ProportionalMisfit(t, n, *args_.proportional);
        if (!misfit) return Verdict::kFit;
        reasons->push_back(std::move(*misfit));
        return Verdict::kUnresolvable;
      });
    }
    if (args_.strategy.weight > 0 || args_.sra.weight > 0) {
      by_id_ = ResolveByResourceId(args_.strategy.resources, ResourceNames::Width());
      h.AddNodeOrderFn([this](const TaskInfo& t, const NodeInfo& n) { return Score(t, n); });
    }
    // A pod's own scoring annotations are not part of its class.
    h.SetNodeLocal([](const TaskInfo& t) { return !t.annotations.contains(kScoringTypeAnnotation); });
  }

 private:
  double Score(const TaskInfo& t, const NodeInfo& n) {
    double score = 0;
    if (args_.strategy.weight > 0) score += StrategyScore(t, n, args_.strategy, by_id_, PodScoringOf(t));
    if (args_.sra.weight > 0) score += SraScore(t, n, args_.sra);
    return score;
  }

  // Read once per task and session: the score is asked per node.
  const PodScoring* PodScoringOf(const TaskInfo& t) {
    if (!t.annotations.contains(kScoringTypeAnnotation)) return nullptr;
    auto [it, added] = pod_scoring_.try_emplace(&t);
    if (added) it->second = ReadPodScoring(t);
    return it->second ? &*it->second : nullptr;
  }

  Args args_;
  std::vector<std::optional<ResourceScoring>> by_id_;
  absl::flat_hash_map<const TaskInfo*, std::optional<PodScoring>> pod_scoring_;
};

}  // namespace
}  // namespace resource_strategy_fit

PluginOr NewResourceStrategyFitPlugin(const Arguments& args) {
  auto parsed = resource_strategy_fit::ParseArgs(args);
  if (!parsed.ok()) return parsed.status();
  return std::make_unique<resource_strategy_fit::ResourceStrategyFitPlugin>(*std::move(parsed));
}

}  // namespace volcanic
