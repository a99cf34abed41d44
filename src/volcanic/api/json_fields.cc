#include "volcanic/api/json_fields.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "volcanic/api/quantity.h"
#include "volcanic/api/status_macros.h"

namespace volcanic {
namespace {

std::string Join(const std::string& path, const std::string& key) {
  return path.empty() ? key : absl::StrCat(path, ".", key);
}

const char* TypeName(const json& v) { return v.type_name(); }

}  // namespace

std::string DescribeObject(const json& obj) {
  std::string kind = "Object";
  if (obj.is_object() && obj.contains("kind") && obj["kind"].is_string()) kind = obj["kind"].get<std::string>();
  std::string name = "<unnamed>", ns;
  if (obj.is_object() && obj.contains("metadata") && obj["metadata"].is_object()) {
    const json& m = obj["metadata"];
    if (m.contains("name") && m["name"].is_string()) name = m["name"].get<std::string>();
    if (m.contains("namespace") && m["namespace"].is_string()) ns = m["namespace"].get<std::string>();
  }
  return ns.empty() ? absl::StrCat(kind, " ", name) : absl::StrCat(kind, " ", ns, "/", name);
}

absl::Status Fields::Error(const std::string& path, const std::string& message) const {
  if (!object_) return absl::InvalidArgumentError(absl::StrCat(path, ": ", message));
  return absl::InvalidArgumentError(absl::StrCat(DescribeObject(*object_), ": ", path, ": ", message));
}

bool Fields::Has(const json& base, const std::string& key) {
  if (!base.is_object()) return false;
  auto it = base.find(key);
  return it != base.end() && !it->is_null();
}

absl::StatusOr<const json*> Fields::Find(const json& base, const std::string& key,
                                         const std::string& path) const {
  if (base.is_null()) return nullptr;
  if (!base.is_object())
    return Error(path.empty() ? "(object)" : path,
                 absl::StrCat("must be an object, got ", TypeName(base)));
  auto it = base.find(key);
  if (it == base.end() || it->is_null()) return nullptr;
  return &*it;
}

absl::StatusOr<std::optional<std::string>> Fields::String(const json& base, const std::string& key,
                                                          const std::string& path) const {
  ASSIGN_OR_RETURN(const json* v, Find(base, key, path));
  if (!v) return std::optional<std::string>();
  if (!v->is_string())
    return Error(Join(path, key), absl::StrCat("must be a string, got ", TypeName(*v)));
  return std::optional<std::string>(v->get<std::string>());
}

absl::StatusOr<std::optional<int64_t>> Fields::Int(const json& base, const std::string& key,
                                                   const std::string& path) const {
  ASSIGN_OR_RETURN(const json* v, Find(base, key, path));
  if (!v) return std::optional<int64_t>();
  if (!v->is_number_integer())
    return Error(Join(path, key), absl::StrCat("must be an integer, got ", TypeName(*v)));
  if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    return Error(Join(path, key), "out of range");
  return std::optional<int64_t>(v->get<int64_t>());
}

absl::StatusOr<std::optional<bool>> Fields::Bool(const json& base, const std::string& key,
                                                 const std::string& path) const {
  ASSIGN_OR_RETURN(const json* v, Find(base, key, path));
  if (!v) return std::optional<bool>();
  if (!v->is_boolean())
    return Error(Join(path, key), absl::StrCat("must be a boolean, got ", TypeName(*v)));
  return std::optional<bool>(v->get<bool>());
}

absl::StatusOr<Labels> Fields::StringMap(const json& base, const std::string& key,
                                         const std::string& path) const {
  ASSIGN_OR_RETURN(const json* v, Find(base, key, path));
  Labels out;
  if (!v) return out;
  // The field's path is built for an error only: most objects have none, and
  // this runs for every map of every object upserted.
  if (!v->is_object()) return Error(Join(path, key), absl::StrCat("must be an object, got ", TypeName(*v)));
  for (const auto& [k, val] : v->items()) {
    if (!val.is_string())
      return Error(absl::StrCat(Join(path, key), ".", k), absl::StrCat("must be a string, got ", TypeName(val)));
    out.emplace(k, val.get<std::string>());
  }
  return out;
}

absl::StatusOr<const json*> Fields::Array(const json& base, const std::string& key,
                                          const std::string& path) const {
  static const json kEmpty = json::array();
  ASSIGN_OR_RETURN(const json* v, Find(base, key, path));
  if (!v) return &kEmpty;
  if (!v->is_array())
    return Error(Join(path, key), absl::StrCat("must be an array, got ", TypeName(*v)));
  return v;
}

absl::StatusOr<Resource> Fields::Resources(const json& base, const std::string& key,
                                           const std::string& path, Resource start, Resource* formats,
                                           NameFilter keep) const {
  ASSIGN_OR_RETURN(const json* v, Find(base, key, path));
  if (!v) return start;
  if (!v->is_object()) return Error(Join(path, key), absl::StrCat("must be an object, got ", TypeName(*v)));
  for (const auto& [name, q] : v->items()) {
    if (keep && !keep(name)) continue;
    ResourceId id = names_.Hold(name);
    QuantityFormat format;
    auto value = QuantityFromJson(q, id, formats ? &format : nullptr);
    if (!value.ok())
      return Error(absl::StrCat(Join(path, key), ".", name), std::string(value.status().message()));
    start.Set(id, *value);
    if (formats) formats->Set(id, static_cast<int64_t>(format));
  }
  return start;
}

absl::StatusOr<std::string> QuantityText(const json& value) {
  if (value.is_string()) return std::string(absl::StripAsciiWhitespace(value.get<std::string>()));
  if (value.is_number()) return value.dump();  // YAML `cpu: 2` or `cpu: 0.5` arrive as numbers
  return absl::InvalidArgumentError(absl::StrCat("a quantity must be a string or a number, got ", value.type_name()));
}

absl::StatusOr<int64_t> QuantityFromJson(const json& value, ResourceId id, QuantityFormat* format) {
  ASSIGN_OR_RETURN(std::string text, QuantityText(value));
  if (format) *format = FormatOfQuantity(text);
  absl::StatusOr<int64_t> v = ResourceNames::IsBytes(id) ? ParseQuantity(text) : ParseMilliQuantity(text);
  if (!v.ok()) return v;
  // Requests and capacities are never negative (the API server rejects
  // them), and values this large are reserved for "unlimited".
  if (*v < 0) return absl::InvalidArgumentError(absl::StrCat("quantity \"", text, "\" must not be negative"));
  if (*v >= kMaxQuantity) return absl::InvalidArgumentError(absl::StrCat("quantity \"", text, "\" is too large"));
  return v;
}

}  // namespace volcanic
