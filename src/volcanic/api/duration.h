// Go's time.ParseDuration, for the duration strings Volcano reads from
// arguments and annotations ("1h2m3s", "1.5h", "300ms", "-2m").
//
// Promises: the same accepted language and the same value as Go: an optional
// sign, then one or more <decimal number><unit> parts with units ns, us, µs,
// μs, ms, s, m, h; "0" alone is zero. Fractions are truncated to whole
// nanoseconds, as Go does.
// Cost: linear in the text; no allocation.
// Bad input: an empty string, a missing or unknown unit, a number without
// digits, or a value beyond ±2^63 ns is an InvalidArgument status whose
// message quotes the text, as Go's error does ("time: missing unit in duration \"1\"").
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace volcanic {

// Nanoseconds, as Go's time.Duration.
absl::StatusOr<int64_t> ParseGoDuration(absl::string_view text);

}  // namespace volcanic
