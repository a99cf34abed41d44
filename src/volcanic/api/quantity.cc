// Kubernetes quantity parsing with exact integer arithmetic (see quantity.h).
//
// A quantity is  sign? mantissa suffix,  so its value is  ±N * 2^bin * 10^exp,
// where N is the mantissa's digits read as one integer (the decimal point only
// lowers exp). To get ceil(value * 10^scale) we never build N itself, which may
// have any number of digits: the digits that stay above the decimal point after
// scaling form a whole part that must fit int64 anyway, and the digits below it
// are folded into "floor of the fraction times 2^bin" plus an "inexact" bit.
// No floating point anywhere, so "0.1" never turns into 0.10000000000000001.
#include "volcanic/api/quantity.h"

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace volcanic {
namespace {

using u128 = unsigned __int128;
constexpr u128 kTwo63 = u128{1} << 63;  // |INT64_MIN|; INT64_MAX is kTwo63 - 1

absl::Status Invalid(absl::string_view text, absl::string_view reason) {
  // CHexEscape keeps ordinary text as is but makes quotes and control bytes
  // visible, so the quoted input in the message is unambiguous.
  return absl::InvalidArgumentError(
      absl::StrCat("invalid quantity \"", absl::CHexEscape(text), "\": ", reason));
}

size_t SkipDigits(absl::string_view s, size_t pos) {
  while (pos < s.size() && absl::ascii_isdigit(static_cast<unsigned char>(s[pos]))) ++pos;
  return pos;
}

// Reads a suffix into a power of ten, a power of two and the format it
// implies; returns an error reason, or nullptr when the suffix is valid.
const char* ParseSuffix(absl::string_view s, int64_t* exp10, int* bin, QuantityFormat* format) {
  struct Unit {
    absl::string_view name;
    int exp10;
    int bin;
  };
  // "" is the plain number; note "k" is lower case and "K" alone is invalid.
  static constexpr Unit kUnits[] = {
      {"", 0, 0},    {"n", -9, 0},  {"u", -6, 0},  {"m", -3, 0},  {"k", 3, 0},
      {"M", 6, 0},   {"G", 9, 0},   {"T", 12, 0},  {"P", 15, 0},  {"E", 18, 0},
      {"Ki", 0, 10}, {"Mi", 0, 20}, {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50},
      {"Ei", 0, 60}};
  *exp10 = 0;
  *bin = 0;
  for (const Unit& u : kUnits) {
    if (s == u.name) {
      *exp10 = u.exp10;
      *bin = u.bin;
      *format = u.bin > 0 ? QuantityFormat::kBinarySI : QuantityFormat::kDecimalSI;
      return nullptr;
    }
  }
  *format = QuantityFormat::kDecimalExponent;
  // Otherwise it must be e/E and a signed decimal integer ("E" alone is exa,
  // matched above). Kubernetes reads it as an int32, so we reject the same
  // exponents it does. Checked by hand: absl::SimpleAtoi would skip spaces.
  if (s.empty() || (s[0] != 'e' && s[0] != 'E')) return "unknown suffix";
  size_t pos = 1;
  const bool negative = pos < s.size() && s[pos] == '-';
  if (pos < s.size() && (s[pos] == '-' || s[pos] == '+')) ++pos;
  if (pos == s.size() || SkipDigits(s, pos) != s.size()) return "bad exponent";
  int64_t e = 0;
  for (; pos < s.size(); ++pos) {
    e = e * 10 + (s[pos] - '0');
    if (e > int64_t{1} << 31) return "exponent out of range";  // no int64 overflow
  }
  if (!negative && e > INT32_MAX) return "exponent out of range";
  *exp10 = negative ? -e : e;
  return nullptr;
}

// |quantity| * 10^scale split into its floor and whether it was inexact.
struct Scaled {
  bool negative = false;
  u128 magnitude = 0;  // floor(|quantity| * 10^scale)
  bool inexact = false;
  QuantityFormat format = QuantityFormat::kDecimalSI;
};

// Reads the text; a magnitude above `limit` (at most 2^100) is out of range.
absl::StatusOr<Scaled> ParseMagnitude(absl::string_view text, int scale, u128 limit) {
  if (text.empty()) return Invalid(text, "empty");
  size_t pos = 0;
  Scaled out;
  out.negative = text[0] == '-';
  if (text[0] == '-' || text[0] == '+') pos = 1;
  // Digits with an optional point; "5." and ".5" are fine, "." alone is not.
  const size_t int_end = SkipDigits(text, pos);
  const absl::string_view int_digits = text.substr(pos, int_end - pos);
  absl::string_view frac_digits;
  pos = int_end;
  if (pos < text.size() && text[pos] == '.') {
    const size_t frac_end = SkipDigits(text, pos + 1);
    frac_digits = text.substr(pos + 1, frac_end - pos - 1);
    pos = frac_end;
  }
  if (int_digits.empty() && frac_digits.empty()) return Invalid(text, "missing digits");
  int64_t exp10;
  int bin;
  if (const char* reason = ParseSuffix(text.substr(pos), &exp10, &bin, &out.format)) {
    return Invalid(text, reason);
  }

  // |value| * 10^scale = N * 2^bin * 10^shift. Cannot overflow: exp10 fits in
  // int32 and the fraction length in size_t is far below 2^62.
  const int64_t shift = exp10 + scale - static_cast<int64_t>(frac_digits.size());
  const size_t total = int_digits.size() + frac_digits.size();
  // Digit i of N counted from the right (0 = units), zero beyond the left end.
  auto digit = [&](uint64_t i) -> uint64_t {
    if (i < frac_digits.size()) return frac_digits[frac_digits.size() - 1 - i] - '0';
    i -= frac_digits.size();
    return i < int_digits.size() ? int_digits[int_digits.size() - 1 - i] - '0' : 0;
  };
  // The k lowest digits of N fall below the decimal point after scaling.
  const uint64_t k = shift < 0 ? static_cast<uint64_t>(-shift) : 0;

  // Whole part: digits above the point, times 10^shift when shift > 0, times
  // 2^bin. It only grows, so once it passes the limit the result is out of
  // range; checked before each step, so nothing overflows 128 bits.
  u128 whole = 0;
  for (uint64_t i = total; i > k; --i) {
    whole = whole * 10 + digit(i - 1);
    if (whole > limit) return Invalid(text, "out of range");
  }
  for (int64_t s = shift; s > 0 && whole != 0; --s) {  // stops at 0: "0e999" is 0
    whole *= 10;
    if (whole > limit) return Invalid(text, "out of range");
  }
  if (whole > (limit >> bin)) return Invalid(text, "out of range");
  whole <<= bin;

  // Fraction part f = the k low digits over 10^k. f * 2^bin can reach 2^bin,
  // so it adds to the integer part; long multiplication from the right gives
  // floor(f * 2^bin) as the final carry, and any nonzero product digit that is
  // dropped means the value was not an integer. The carry stays < 2^bin, so
  // every step fits in uint64 (9 * 2^60 + 2^60 < 2^64).
  const uint64_t factor = uint64_t{1} << bin;
  uint64_t carry = 0;
  bool inexact = false;
  for (uint64_t i = 0; i < k; ++i) {
    if (i >= total && carry == 0) break;  // only zeros left: nothing changes
    const uint64_t t = digit(i) * factor + carry;
    inexact |= t % 10 != 0;
    carry = t / 10;
  }
  out.magnitude = whole + carry;
  out.inexact = inexact;
  return out;
}

// ceil(quantity * 10^scale) as an int64, or an error.
absl::StatusOr<int64_t> ParseScaled(absl::string_view text, int scale) {
  auto s = ParseMagnitude(text, scale, kTwo63);
  if (!s.ok()) return s.status();
  // Round up, towards +infinity: a positive inexact value goes one up, while
  // for a negative one ceil(-x) = -floor(x) is just the magnitude, negated.
  // Kubernetes' own Quantity.Value() rounds negatives away from zero instead;
  // quantity.h promises ceil, which is what we do for both signs.
  if (s->negative) {
    if (s->magnitude > kTwo63) return Invalid(text, "out of range");
    if (s->magnitude == 0) return int64_t{0};
    return -static_cast<int64_t>(s->magnitude - 1) - 1;  // no overflow at INT64_MIN
  }
  const u128 rounded = s->magnitude + (s->inexact ? 1 : 0);
  if (rounded >= kTwo63) return Invalid(text, "out of range");
  return static_cast<int64_t>(rounded);
}

}  // namespace

const char* QuantityFormatName(QuantityFormat f) {
  switch (f) {
    case QuantityFormat::kBinarySI:
      return "BinarySI";
    case QuantityFormat::kDecimalExponent:
      return "DecimalExponent";
    case QuantityFormat::kDecimalSI:
      break;
  }
  return "DecimalSI";
}

absl::StatusOr<int64_t> ParseMilliQuantity(absl::string_view text) {
  return ParseScaled(text, 3);
}

absl::StatusOr<int64_t> ParseQuantity(absl::string_view text) { return ParseScaled(text, 0); }

absl::StatusOr<ExactQuantity> ParseExactQuantity(absl::string_view text) {
  constexpr u128 kNano = 1'000'000'000;
  auto s = ParseMagnitude(text, 9, kTwo63 * kNano);
  if (!s.ok()) return s.status();
  // The same range and rounding (towards +infinity) as ParseScaled.
  const u128 rounded = s->magnitude + (!s->negative && s->inexact ? 1 : 0);
  if (s->negative ? rounded > kTwo63 * kNano : rounded >= kTwo63 * kNano) return Invalid(text, "out of range");
  const __int128 nanos = static_cast<__int128>(rounded);
  return ExactQuantity{s->negative ? -nanos : nanos, s->format};
}

QuantityFormat FormatOfQuantity(absl::string_view text) {
  auto s = ParseMagnitude(text, 0, kTwo63);
  return s.ok() ? s->format : QuantityFormat::kDecimalSI;
}

std::string FormatMilliQuantity(int64_t milli) {
  // Whole units print bare, everything else in milli units; both parse back
  // to exactly the same milli-value.
  if (milli % 1000 == 0) return absl::StrCat(milli / 1000);
  return absl::StrCat(milli, "m");
}

std::string FormatByteQuantity(int64_t bytes) {
  if (bytes == 0) return "0";  // a multiple of everything, but "0Ei" is silly
  static constexpr const char* kSuffixes[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  // Largest exact power of 1024 first. C++ % truncates, so negatives work too,
  // including INT64_MIN = -8Ei.
  for (int i = 5; i >= 0; --i) {
    const int64_t unit = int64_t{1} << (10 * (i + 1));
    if (bytes % unit == 0) return absl::StrCat(bytes / unit, kSuffixes[i]);
  }
  return absl::StrCat(bytes);
}

}  // namespace volcanic
