// Kubernetes resource quantities (k8s.io/apimachinery/pkg/api/resource).
//
// Promises: parses every form Kubernetes accepts ("100m", "1.5", "2Gi", "1G",
// "1e3", "0.5Ki", "+1", ".5", "5.", "5E-3", ...) exactly (no floating point)
// and rounds up, towards +infinity, to the next integer, as Quantity's
// MilliValue() / Value() do for positive values. Known differences from
// Kubernetes, all deliberate: a negative value also rounds towards +infinity
// ("-1.5" -> -1; Kubernetes rounds it away from zero, to -2); a value outside
// int64 is an error (Kubernetes silently caps "8Ei" at 2^63-1); and text with
// no digits at all ("Gi", ".", "+") is an error (Kubernetes reads it as 0).
// Bad input: other text Kubernetes would reject, or a value outside int64 after
// scaling, is an InvalidArgument status with the message
// `invalid quantity "TEXT": REASON` (TEXT C-escaped; REASON is e.g. "empty",
// "missing digits", "unknown suffix", "bad exponent", "out of range").
// Cost: O(length of the text), no allocation on the success path.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace volcanic {

// How Kubernetes writes a quantity back (Quantity.Format): by its suffix.
enum class QuantityFormat : uint8_t { kDecimalSI, kBinarySI, kDecimalExponent };
const char* QuantityFormatName(QuantityFormat f);  // "DecimalSI", "BinarySI", "DecimalExponent"

// The quantity times 1000, rounded up: "100m" -> 100, "1.5" -> 1500, "1Ki" -> 1024000.
absl::StatusOr<int64_t> ParseMilliQuantity(absl::string_view text);

// The quantity rounded up to an integer: "2Gi" -> 2147483648, "100m" -> 1.
absl::StatusOr<int64_t> ParseQuantity(absl::string_view text);

// A quantity exactly enough for Kubernetes' own arithmetic (its values are
// nano-precise): nano-units, rounded up as above, and the format it was
// written in. Same grammar and range as ParseQuantity.
struct ExactQuantity {
  __int128 nanos = 0;
  QuantityFormat format = QuantityFormat::kDecimalSI;
};
absl::StatusOr<ExactQuantity> ParseExactQuantity(absl::string_view text);

// The format of a quantity's text (kDecimalSI for text that does not parse).
QuantityFormat FormatOfQuantity(absl::string_view text);

// Canonical text for a milli-value: whole units bare, else milli units:
// 1500 -> "1500m", 2000 -> "2", 0 -> "0", -500 -> "-500m" (no k/M suffixes).
std::string FormatMilliQuantity(int64_t milli);

// Canonical text for a byte count: binary suffix when exact ("1Gi", "512Mi"),
// else the plain integer ("1000000").
std::string FormatByteQuantity(int64_t bytes);

}  // namespace volcanic
