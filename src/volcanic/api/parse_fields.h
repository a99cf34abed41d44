// Pieces the parsers of several kinds share (parse.cc, parse_cluster.cc, volumes.cc): object
// metadata, node selector terms and label selectors, each read with Fields so
// errors name the object and the field.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "volcanic/api/json_fields.h"
#include "volcanic/api/placement.h"

namespace volcanic {

struct Meta {
  std::string name, ns, uid;
  int64_t creation_ms = 0;
  bool deleting = false;
  Labels labels, annotations;
};

// metadata: name required; a namespaced object's namespace defaults to "default".
absl::StatusOr<Meta> ParseMeta(const json& obj, const Fields& f, bool namespaced);
absl::StatusOr<NodeSelectorTerm> ParseTerm(const json& t, const Fields& f, const std::string& path);
absl::StatusOr<LabelSelector> ParseLabelSelector(const json& sel, const Fields& f, const std::string& path);
// An integer field that must fit an int32 (a priority), else an error naming `path`.
absl::StatusOr<int32_t> ToInt32(const Fields& f, const std::string& path, int64_t v);

}  // namespace volcanic
