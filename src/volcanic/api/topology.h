// Network topology as Volcano models it (topology.volcano.sh/v1alpha1
// HyperNodes; a PodGroup's networkTopology and subGroupPolicy): the objects as
// parsed. The tree the scheduler searches is framework/hypernodes.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "volcanic/api/json_fields.h"
#include "volcanic/api/placement.h"

namespace volcanic {

// A PodGroup's (or a sub-group's) spec.networkTopology.
struct NetworkTopology {
  std::string mode;                 // "hard", "soft", or "" (the CRD defaults it to hard)
  std::optional<int32_t> highest_tier;  // highestTierAllowed
  std::string highest_tier_name;    // highestTierName (the webhook refuses both)
  bool operator==(const NetworkTopology&) const = default;
};

// One entry of a PodGroup's spec.subGroupPolicy: the pods it selects, grouped
// by the values of matchLabelKeys, are gangs of subGroupSize.
struct SubGroupPolicy {
  std::string name;
  std::optional<NetworkTopology> topology;
  int32_t sub_group_size = 1;
  int32_t min_sub_groups = 0;
  std::optional<LabelSelector> selector;  // nullopt: every pod
  std::vector<std::string> match_label_keys;
  bool operator==(const SubGroupPolicy&) const = default;
};

// A member of a HyperNode: nodes or child HyperNodes chosen by exact name, by
// a regular expression over node names, or by node labels.
struct HyperNodeMember {
  enum class Type : uint8_t { kNode, kHyperNode };
  enum class Match : uint8_t { kExact, kRegex, kLabel };
  Type type = Type::kNode;
  Match match = Match::kExact;
  std::string text;      // the exact name or the pattern
  LabelSelector labels;  // Match::kLabel
  bool operator==(const HyperNodeMember&) const = default;
};

struct HyperNodeSpec {
  std::string name;
  int32_t tier = 0;
  std::string tier_name;
  std::vector<HyperNodeMember> members;
  bool operator==(const HyperNodeSpec&) const = default;
};

absl::StatusOr<HyperNodeSpec> ParseHyperNode(const nlohmann::json& obj);
// `base[key]` (absent or null: nullopt), errors naming `path`.
absl::StatusOr<std::optional<NetworkTopology>> ParseNetworkTopology(const nlohmann::json& base, const Fields& f,
                                                                    const std::string& path);
absl::StatusOr<std::vector<SubGroupPolicy>> ParseSubGroupPolicies(const nlohmann::json& spec, const Fields& f);

}  // namespace volcanic
