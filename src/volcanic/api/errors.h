// The errors the engine reports, as absl::Status codes so the binding layer
// can map them to volcanic.InvalidObject, volcanic.ConfigError and
// volcanic.PluginError without parsing messages.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/cord.h"

namespace volcanic {

// A malformed object: InvalidArgument (what parse.h returns).
inline absl::Status ObjectError(const std::string& message) {
  return absl::InvalidArgumentError(message);
}
inline bool IsObjectError(const absl::Status& s) { return s.code() == absl::StatusCode::kInvalidArgument; }

// A bad scheduler configuration: FailedPrecondition.
inline absl::Status ConfigError(const std::string& message) {
  return absl::FailedPreconditionError(message);
}
inline bool IsConfigError(const absl::Status& s) {
  return s.code() == absl::StatusCode::kFailedPrecondition;
}

// A plugin failed while a session ran (a Python plugin raised): Aborted, with
// the plugin's name as the payload kPluginPayload. Not a caller mistake in
// the objects or the configuration, so neither of the above.
inline constexpr char kPluginPayload[] = "volcanic/plugin";
inline absl::Status PluginError(const std::string& plugin, const std::string& message) {
  absl::Status s = absl::AbortedError(message);
  s.SetPayload(kPluginPayload, absl::Cord(plugin));
  return s;
}
inline bool IsPluginError(const absl::Status& s) { return s.code() == absl::StatusCode::kAborted; }
inline std::string PluginOf(const absl::Status& s) {
  auto p = s.GetPayload(kPluginPayload);
  return p ? std::string(*p) : std::string();
}

}  // namespace volcanic
