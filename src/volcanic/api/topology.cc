#include "volcanic/api/topology.h"

#include "absl/strings/str_cat.h"
#include "volcanic/api/parse_fields.h"
#include "volcanic/api/status_macros.h"

namespace volcanic {

absl::StatusOr<std::optional<NetworkTopology>> ParseNetworkTopology(const nlohmann::json& base, const Fields& f,
                                                                    const std::string& path) {
  ASSIGN_OR_RETURN(const nlohmann::json* nt, f.Find(base, "networkTopology", path));
  if (!nt) return std::nullopt;
  std::string here = path.empty() ? "networkTopology" : path + ".networkTopology";
  NetworkTopology out;
  ASSIGN_OR_RETURN(auto mode, f.String(*nt, "mode", here));
  out.mode = mode.value_or("");
  if (!out.mode.empty() && out.mode != "hard" && out.mode != "soft")
    return f.Error(here + ".mode", "must be hard or soft");
  ASSIGN_OR_RETURN(auto tier, f.Int(*nt, "highestTierAllowed", here));
  if (tier) {
    if (*tier < 0 || *tier > INT32_MAX) return f.Error(here + ".highestTierAllowed", "must be in [0, 2^31)");
    out.highest_tier = static_cast<int32_t>(*tier);
  }
  ASSIGN_OR_RETURN(auto name, f.String(*nt, "highestTierName", here));
  out.highest_tier_name = name.value_or("");
  return out;
}

namespace {

absl::StatusOr<int32_t> PositiveOr(const Fields& f, const nlohmann::json& base, const char* key,
                                   const std::string& path, int32_t fallback, int64_t minimum) {
  ASSIGN_OR_RETURN(auto v, f.Int(base, key, path));
  if (!v) return fallback;
  if (*v < minimum || *v > INT32_MAX) return f.Error(absl::StrCat(path, ".", key), absl::StrCat("must be >= ", minimum));
  return static_cast<int32_t>(*v);
}

absl::StatusOr<SubGroupPolicy> ParseSubGroupPolicy(const nlohmann::json& p, const Fields& f,
                                                   const std::string& path) {
  SubGroupPolicy out;
  ASSIGN_OR_RETURN(auto name, f.String(p, "name", path));
  out.name = name.value_or("");
  ASSIGN_OR_RETURN(out.topology, ParseNetworkTopology(p, f, path));
  ASSIGN_OR_RETURN(out.sub_group_size, PositiveOr(f, p, "subGroupSize", path, 1, 1));
  ASSIGN_OR_RETURN(out.min_sub_groups, PositiveOr(f, p, "minSubGroups", path, 0, 0));
  ASSIGN_OR_RETURN(const nlohmann::json* sel, f.Find(p, "labelSelector", path));
  if (sel) {
    ASSIGN_OR_RETURN(out.selector, ParseLabelSelector(*sel, f, path + ".labelSelector"));
  }
  ASSIGN_OR_RETURN(const nlohmann::json* keys, f.Array(p, "matchLabelKeys", path));
  for (size_t i = 0; i < keys->size(); ++i) {
    if (!(*keys)[i].is_string()) return f.Error(absl::StrCat(path, ".matchLabelKeys[", i, "]"), "must be a string");
    out.match_label_keys.push_back((*keys)[i].get<std::string>());
  }
  return out;
}

// One member's selector: exactly one of exactMatch, regexMatch, labelMatch.
absl::Status ParseSelector(const nlohmann::json& member, const Fields& f, const std::string& path,
                           HyperNodeMember& out) {
  std::string here = path + ".selector";
  ASSIGN_OR_RETURN(const nlohmann::json* sel, f.Find(member, "selector", path));
  if (!sel) return f.Error(here, "is required");
  int given = 0;
  ASSIGN_OR_RETURN(const nlohmann::json* exact, f.Find(*sel, "exactMatch", here));
  if (exact) {
    ++given;
    out.match = HyperNodeMember::Match::kExact;
    ASSIGN_OR_RETURN(auto name, f.String(*exact, "name", here + ".exactMatch"));
    if (!name || name->empty()) return f.Error(here + ".exactMatch.name", "is required");
    out.text = *name;
  }
  ASSIGN_OR_RETURN(const nlohmann::json* regex, f.Find(*sel, "regexMatch", here));
  if (regex) {
    ++given;
    out.match = HyperNodeMember::Match::kRegex;
    ASSIGN_OR_RETURN(auto pattern, f.String(*regex, "pattern", here + ".regexMatch"));
    if (!pattern || pattern->empty()) return f.Error(here + ".regexMatch.pattern", "is required");
    out.text = *pattern;
  }
  ASSIGN_OR_RETURN(const nlohmann::json* labels, f.Find(*sel, "labelMatch", here));
  if (labels) {
    ++given;
    out.match = HyperNodeMember::Match::kLabel;
    ASSIGN_OR_RETURN(out.labels, ParseLabelSelector(*labels, f, here + ".labelMatch"));
  }
  if (given != 1) return f.Error(here, "must set exactly one of exactMatch, regexMatch and labelMatch");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<SubGroupPolicy>> ParseSubGroupPolicies(const nlohmann::json& spec, const Fields& f) {
  std::vector<SubGroupPolicy> out;
  ASSIGN_OR_RETURN(const nlohmann::json* arr, f.Array(spec, "subGroupPolicy", "spec"));
  for (size_t i = 0; i < arr->size(); ++i) {
    ASSIGN_OR_RETURN(auto p, ParseSubGroupPolicy((*arr)[i], f, absl::StrCat("spec.subGroupPolicy[", i, "]")));
    out.push_back(std::move(p));
  }
  return out;
}

absl::StatusOr<HyperNodeSpec> ParseHyperNode(const nlohmann::json& obj) {
  Fields f(obj);
  ASSIGN_OR_RETURN(Meta m, ParseMeta(obj, f, false));
  HyperNodeSpec out;
  out.name = m.name;
  ASSIGN_OR_RETURN(const nlohmann::json* spec, f.Find(obj, "spec", ""));
  if (!spec) return f.Error("spec", "is required");
  ASSIGN_OR_RETURN(auto tier, f.Int(*spec, "tier", "spec"));
  if (!tier) return f.Error("spec.tier", "is required");
  if (*tier < 0 || *tier > INT32_MAX) return f.Error("spec.tier", "must be in [0, 2^31)");
  out.tier = static_cast<int32_t>(*tier);
  ASSIGN_OR_RETURN(auto tier_name, f.String(*spec, "tierName", "spec"));
  out.tier_name = tier_name.value_or("");
  ASSIGN_OR_RETURN(const nlohmann::json* members, f.Array(*spec, "members", "spec"));
  if (members->empty()) return f.Error("spec.members", "must have at least one member");
  for (size_t i = 0; i < members->size(); ++i) {
    std::string path = absl::StrCat("spec.members[", i, "]");
    HyperNodeMember member;
    ASSIGN_OR_RETURN(auto type, f.String((*members)[i], "type", path));
    if (type == "Node") {
      member.type = HyperNodeMember::Type::kNode;
    } else if (type == "HyperNode") {
      member.type = HyperNodeMember::Type::kHyperNode;
    } else {
      return f.Error(path + ".type", "must be Node or HyperNode");
    }
    RETURN_IF_ERROR(ParseSelector((*members)[i], f, path, member));
    out.members.push_back(std::move(member));
  }
  return out;
}

}  // namespace volcanic
