// The two kinds of caller error the engine reports, as absl::Status codes so
// the binding layer can map them to volcanic.InvalidObject and
// volcanic.ConfigError without parsing messages.
#pragma once

#include <string>

#include "absl/status/status.h"

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

}  // namespace volcanic
