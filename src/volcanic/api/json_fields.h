// Typed, path-aware reads from Kubernetes JSON. Every error names the object
// (e.g. "Pod default/p1") and the field path (e.g. "spec.priority").
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "volcanic/api/placement.h"
#include "volcanic/api/quantity.h"
#include "volcanic/api/resource.h"

namespace volcanic {

using nlohmann::json;

// "Kind ns/name" or "Kind name", for messages; never fails.
std::string DescribeObject(const json& obj);

class Fields {
 public:
  Fields() = default;  // messages name the field only
  // Messages name `object` (DescribeObject), found only when there is one to write.
  explicit Fields(const json& object) : object_(&object) {}
  explicit Fields(const json&& object) = delete;  // it must outlive the Fields

  absl::Status Error(const std::string& path, const std::string& message) const;

  // nullptr when absent or null; an error when a parent is not an object.
  absl::StatusOr<const json*> Find(const json& base, const std::string& key,
                                   const std::string& path) const;
  absl::StatusOr<std::optional<std::string>> String(const json& base, const std::string& key,
                                                    const std::string& path) const;
  absl::StatusOr<std::optional<int64_t>> Int(const json& base, const std::string& key,
                                             const std::string& path) const;
  absl::StatusOr<std::optional<bool>> Bool(const json& base, const std::string& key,
                                           const std::string& path) const;
  // A map of string to string (labels, annotations, nodeSelector).
  absl::StatusOr<Labels> StringMap(const json& base, const std::string& key,
                                   const std::string& path) const;
  // An array (empty when absent); an error when present and not an array.
  absl::StatusOr<const json*> Array(const json& base, const std::string& key,
                                    const std::string& path) const;
  // A ResourceList into a resource vector starting from `start`; with
  // `formats`, the QuantityFormat of each quantity read is set there too.
  // The names read are held until TakeResourceNames. With `keep`, only the
  // names it accepts are read; the others are skipped unparsed.
  using NameFilter = bool (*)(std::string_view name);
  absl::StatusOr<Resource> Resources(const json& base, const std::string& key,
                                     const std::string& path, Resource start = {},
                                     Resource* formats = nullptr, NameFilter keep = nullptr) const;
  // The resource names read so far, for the object being built to hold.
  ResourceNameRefs TakeResourceNames() const { return std::move(names_); }
  // Whether base[key] is present and not null.
  static bool Has(const json& base, const std::string& key);

 private:
  const json* object_ = nullptr;
  mutable ResourceNameRefs names_;
};

// Quantities at or above this are refused: 2^53 milli-units (9 peta-cores,
// 8 PiB) is far beyond any node, keeps sums exact, and leaves
// Resource::kInfinite to mean "unlimited".
inline constexpr int64_t kMaxQuantity = int64_t{1} << 53;

// The text of a quantity given as a string or a JSON number, with surrounding
// spaces dropped (as Quantity's UnmarshalJSON does).
absl::StatusOr<std::string> QuantityText(const json& value);

// One resource quantity (string or JSON number) in the unit of resource `id`;
// negative or too large values are an error. With `format`, its format too.
absl::StatusOr<int64_t> QuantityFromJson(const json& value, ResourceId id, QuantityFormat* format = nullptr);

}  // namespace volcanic
