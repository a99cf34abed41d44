#include "volcanic/framework/conf.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "volcanic/api/errors.h"
#include "volcanic/api/status_macros.h"
#include "volcanic/framework/registry.h"

namespace volcanic {

const std::vector<std::string>& KnownEnableFlags() {
  static const std::vector<std::string> kFlags = {
      "enableJobOrder",        "enableHierarchy",        "enableJobReady",
      "enableJobPipelined",    "enableTaskOrder",        "enablePreemptable",
      "enableReclaimable",     "enablePreemptive",       "enableQueueOrder",
      "enabledClusterOrder",   "enablePredicate",        "enableBestNode",
      "enableNodeOrder",       "enableTargetJob",        "enableReservedNodes",
      "enableJobEnqueued",     "enabledVictim",          "enableJobStarving",
      "enabledOverused",       "enabledAllocatable",     "enabledHyperNodeOrder",
      "enabledSubJobReady",    "enabledSubJobPipelined", "enabledSubJobOrder",
      "enabledHyperNodeGradient"};
  return kFlags;
}

absl::Status Arguments::TypeError(std::string_view key, const char* want) const {
  return ConfigError(absl::StrCat(owner_, ": argument ", std::string(key), " must be ", want, ", got ",
                                  args_[key].dump()));
}

absl::StatusOr<double> Arguments::Float(std::string_view key, double def) const {
  if (!args_.contains(key)) return def;
  const json& v = args_[key];
  double out = 0;
  bool parsed = v.is_number() || (v.is_string() && absl::SimpleAtod(v.get<std::string>(), &out));
  if (v.is_number()) out = v.get<double>();
  if (!parsed || !std::isfinite(out)) return TypeError(key, "a finite number");
  return out;
}

absl::StatusOr<int64_t> Arguments::Int(std::string_view key, int64_t def) const {
  if (!args_.contains(key)) return def;
  const json& v = args_[key];
  int64_t out;
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_string() && absl::SimpleAtoi(v.get<std::string>(), &out)) return out;
  return TypeError(key, "an integer");
}

absl::StatusOr<bool> Arguments::Bool(std::string_view key, bool def) const {
  if (!args_.contains(key)) return def;
  const json& v = args_[key];
  bool out;
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_string() && absl::SimpleAtob(v.get<std::string>(), &out)) return out;
  return TypeError(key, "a boolean");
}

absl::StatusOr<std::string> Arguments::String(std::string_view key, const std::string& def) const {
  if (!args_.contains(key)) return def;
  const json& v = args_[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number() || v.is_boolean()) return v.dump();
  return TypeError(key, "a string");
}

absl::Status Arguments::CheckKnown(absl::Span<const std::string_view> known,
                                   absl::Span<const std::string_view> prefixes) const {
  for (const auto& [key, value] : args_.items()) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    if (std::any_of(prefixes.begin(), prefixes.end(),
                    [&](std::string_view p) { return std::string_view(key).starts_with(p); }))
      continue;
    std::vector<std::string> all(known.begin(), known.end());
    for (std::string_view p : prefixes) all.push_back(std::string(p) + "<name>");
    return ConfigError(absl::StrCat(owner_, ": unknown argument \"", key, "\"; known arguments: ",
                                    all.empty() ? "none" : absl::StrJoin(all, ", ")));
  }
  return absl::OkStatus();
}

bool SchedulerConf::HasAction(const std::string& name) const {
  return std::find(actions.begin(), actions.end(), name) != actions.end();
}

SchedulerConf DefaultSchedulerConf() {
  SchedulerConf conf;
  conf.actions = {"enqueue", "allocate", "backfill"};
  auto tier = [](std::initializer_list<const char*> names) {
    Tier t;
    for (const char* n : names) t.plugins.push_back({n, {}, Arguments(json::object(), absl::StrCat("plugin ", n))});
    return t;
  };
  conf.tiers.push_back(tier({"priority", "gang", "conformance"}));
  conf.tiers.push_back(tier({"overcommit", "drf", "predicates", "proportion", "nodeorder"}));
  return conf;
}

namespace {

absl::StatusOr<PluginOption> ParsePlugin(const json& p, size_t tier, size_t index, const Registry& registry) {
  std::string where = absl::StrCat("tiers[", tier, "].plugins[", index, "]");
  if (!p.is_object()) return ConfigError(absl::StrCat(where, ": must be an object"));
  if (!p.contains("name") || !p["name"].is_string())
    return ConfigError(absl::StrCat(where, ".name: is required and must be a string"));
  PluginOption opt;
  opt.name = p["name"].get<std::string>();
  const auto& flags = KnownEnableFlags();
  for (const auto& [key, value] : p.items()) {
    if (key == "name") continue;
    if (key == "arguments") {
      if (!value.is_object() && !value.is_null())
        return ConfigError(absl::StrCat(where, ".arguments: must be a map"));
      opt.arguments = Arguments(value.is_null() ? json::object() : value, absl::StrCat("plugin ", opt.name));
      continue;
    }
    if (std::find(flags.begin(), flags.end(), key) == flags.end())
      return ConfigError(absl::StrCat(where, " (", opt.name, "): unknown field \"", key,
                                      "\"; known: name, arguments, ", absl::StrJoin(flags, ", ")));
    if (!value.is_boolean())
      return ConfigError(absl::StrCat(where, " (", opt.name, "): ", key, " must be true or false"));
    opt.flags[key] = value.get<bool>();
  }
  if (opt.arguments.raw().is_null() || !opt.arguments.raw().is_object())
    opt.arguments = Arguments(json::object(), absl::StrCat("plugin ", opt.name));
  if (!p.contains("arguments")) opt.arguments = Arguments(json::object(), absl::StrCat("plugin ", opt.name));
  // Building the plugin once checks its name and arguments.
  auto built = registry.BuildPlugin(opt.name, opt.arguments);
  if (!built.ok()) return built.status();
  return opt;
}

}  // namespace

absl::StatusOr<SchedulerConf> ParseSchedulerConf(const json& conf) {
  return ParseSchedulerConf(conf, Registry::Builtins());
}

absl::StatusOr<SchedulerConf> ParseSchedulerConf(const json& conf, const Registry& registry) {
  if (!conf.is_object()) return ConfigError("scheduler configuration: must be a map with actions and tiers");
  for (const auto& [key, _] : conf.items())
    if (key != "actions" && key != "tiers" && key != "configurations" && key != "metrics")
      return ConfigError(absl::StrCat("scheduler configuration: unknown field \"", key,
                                      "\"; known: actions, tiers, configurations, metrics"));
  SchedulerConf out;
  if (!conf.contains("actions") || !conf["actions"].is_string())
    return ConfigError("scheduler configuration: actions: is required and must be a string such as \"enqueue, allocate, backfill\"");
  std::vector<std::string> known_actions = registry.ActionNames();
  for (absl::string_view a : absl::StrSplit(conf["actions"].get<std::string>(), ',', absl::SkipWhitespace())) {
    std::string name(absl::StripAsciiWhitespace(a));
    if (std::find(known_actions.begin(), known_actions.end(), name) == known_actions.end())
      return ConfigError(absl::StrCat("scheduler configuration: unknown action \"", name,
                                      "\"; known actions: ", absl::StrJoin(known_actions, ", ")));
    out.actions.push_back(name);
  }
  if (conf.contains("tiers")) {
    const json& tiers = conf["tiers"];
    if (!tiers.is_array()) return ConfigError("scheduler configuration: tiers: must be a list");
    for (size_t i = 0; i < tiers.size(); ++i) {
      const json& t = tiers[i];
      if (!t.is_object() || !t.contains("plugins") || !t["plugins"].is_array())
        return ConfigError(absl::StrCat("tiers[", i, "]: must be a map with a plugins list"));
      Tier tier;
      bool drf_hierarchy = false, proportion = false;
      for (size_t j = 0; j < t["plugins"].size(); ++j) {
        ASSIGN_OR_RETURN(PluginOption opt, ParsePlugin(t["plugins"][j], i, j, registry));
        auto h = opt.flags.find("enableHierarchy");
        if (opt.name == "drf" && h != opt.flags.end() && h->second) drf_hierarchy = true;
        if (opt.name == "proportion") proportion = true;
        tier.plugins.push_back(std::move(opt));
      }
      if (drf_hierarchy && proportion)
        return ConfigError(absl::StrCat("tiers[", i, "]: proportion and drf with hierarchy enabled conflicts"));
      out.tiers.push_back(std::move(tier));
    }
  }
  if (conf.contains("configurations")) {
    const json& cs = conf["configurations"];
    if (!cs.is_array()) return ConfigError("scheduler configuration: configurations: must be a list");
    for (size_t i = 0; i < cs.size(); ++i) {
      const json& c = cs[i];
      if (!c.is_object() || !c.contains("name") || !c["name"].is_string())
        return ConfigError(absl::StrCat("configurations[", i, "]: must be a map with a name"));
      std::string name = c["name"].get<std::string>();
      json args = c.contains("arguments") && c["arguments"].is_object() ? c["arguments"] : json::object();
      Arguments arguments(args, absl::StrCat("action ", name));
      if (std::find(known_actions.begin(), known_actions.end(), name) == known_actions.end())
        return ConfigError(absl::StrCat("configurations[", i, "]: unknown action \"", name,
                                        "\"; known actions: ", absl::StrJoin(known_actions, ", ")));
      auto built = registry.BuildAction(name, arguments);
      if (!built.ok()) return built.status();
      out.action_arguments[name] = std::move(arguments);
    }
  }
  return out;
}

bool HierarchyEnabled(const SchedulerConf& conf, std::string_view plugin) {
  for (const Tier& tier : conf.tiers)
    for (const PluginOption& p : tier.plugins) {
      if (p.name != plugin) continue;
      auto it = p.flags.find("enableHierarchy");
      return it != p.flags.end() && it->second;
    }
  return false;
}

}  // namespace volcanic
