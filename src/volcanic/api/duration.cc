#include "volcanic/api/duration.h"

#include <cstdint>

#include "absl/strings/str_cat.h"

namespace volcanic {
namespace {

constexpr uint64_t kTwo63 = uint64_t{1} << 63;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Nanoseconds per unit, or 0 for an unknown unit. Both micro signs Go
// accepts: U+00B5 (micro sign) and U+03BC (Greek small letter mu).
uint64_t UnitNanos(absl::string_view u) {
  if (u == "ns") return 1;
  if (u == "us" || u == "\xC2\xB5s" || u == "\xCE\xBCs") return 1'000;
  if (u == "ms") return 1'000'000;
  if (u == "s") return 1'000'000'000;
  if (u == "m") return 60'000'000'000;
  if (u == "h") return 3'600'000'000'000;
  return 0;
}

// Leading [0-9]*; false when the value passes 2^63.
bool LeadingInt(absl::string_view* s, uint64_t* x) {
  *x = 0;
  size_t i = 0;
  for (; i < s->size() && IsDigit((*s)[i]); ++i) {
    if (*x > kTwo63 / 10) return false;
    *x = *x * 10 + static_cast<uint64_t>((*s)[i] - '0');
    if (*x > kTwo63) return false;
  }
  s->remove_prefix(i);
  return true;
}

// Leading [0-9]* after a period; digits beyond int64 precision are
// consumed and ignored, as Go does.
void LeadingFraction(absl::string_view* s, uint64_t* x, double* scale) {
  *x = 0;
  *scale = 1;
  bool overflow = false;
  size_t i = 0;
  for (; i < s->size() && IsDigit((*s)[i]); ++i) {
    if (overflow) continue;
    if (*x > (kTwo63 - 1) / 10) {
      overflow = true;
      continue;
    }
    uint64_t y = *x * 10 + static_cast<uint64_t>((*s)[i] - '0');
    if (y > kTwo63) {
      overflow = true;
      continue;
    }
    *x = y;
    *scale *= 10;
  }
  s->remove_prefix(i);
}

absl::Status Invalid(absl::string_view orig) {
  return absl::InvalidArgumentError(absl::StrCat("time: invalid duration \"", orig, "\""));
}

}  // namespace

absl::StatusOr<int64_t> ParseGoDuration(absl::string_view text) {
  absl::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return 0;
  if (s.empty()) return Invalid(text);
  uint64_t total = 0;
  while (!s.empty()) {
    if (s[0] != '.' && !IsDigit(s[0])) return Invalid(text);
    size_t before = s.size();
    uint64_t whole = 0;
    if (!LeadingInt(&s, &whole)) return Invalid(text);
    bool digits_before = before != s.size();
    uint64_t frac = 0;
    double scale = 1;
    bool digits_after = false;
    if (!s.empty() && s[0] == '.') {
      s.remove_prefix(1);
      size_t at = s.size();
      LeadingFraction(&s, &frac, &scale);
      digits_after = at != s.size();
    }
    if (!digits_before && !digits_after) return Invalid(text);
    size_t i = 0;
    while (i < s.size() && s[i] != '.' && !IsDigit(s[i])) ++i;
    if (i == 0) return absl::InvalidArgumentError(absl::StrCat("time: missing unit in duration \"", text, "\""));
    absl::string_view unit_text = s.substr(0, i);
    s.remove_prefix(i);
    uint64_t unit = UnitNanos(unit_text);
    if (unit == 0)
      return absl::InvalidArgumentError(
          absl::StrCat("time: unknown unit \"", unit_text, "\" in duration \"", text, "\""));
    if (whole > kTwo63 / unit) return Invalid(text);
    uint64_t v = whole * unit;
    if (frac > 0) {
      // As Go: a double keeps fractions of an hour nanosecond-exact.
      v += static_cast<uint64_t>(static_cast<double>(frac) * (static_cast<double>(unit) / scale));
      if (v > kTwo63) return Invalid(text);
    }
    total += v;
    if (total > kTwo63) return Invalid(text);
  }
  if (negative) return static_cast<int64_t>(0 - total);  // -2^63 stays representable
  if (total > kTwo63 - 1) return Invalid(text);
  return static_cast<int64_t>(total);
}

}  // namespace volcanic
