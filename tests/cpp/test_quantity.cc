// Tests for volcanic/api/quantity.h: Kubernetes resource.ParseQuantity grammar,
// exact round-up to milli / whole units, int64 range errors and formatting.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "volcanic/api/quantity.h"

namespace {

using volcanic::FormatByteQuantity;
using volcanic::FormatMilliQuantity;
using volcanic::ParseMilliQuantity;
using volcanic::ParseQuantity;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

struct Case {
  std::string text;
  int64_t milli;  // expected ParseMilliQuantity
  int64_t value;  // expected ParseQuantity
};

void CheckParses(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    INFO("text: \"" << c.text << "\"");
    auto milli = ParseMilliQuantity(c.text);
    REQUIRE(milli.ok());
    CHECK(*milli == c.milli);
    auto value = ParseQuantity(c.text);
    REQUIRE(value.ok());
    CHECK(*value == c.value);
  }
}

// The error is InvalidArgument, quotes the text and gives the reason.
void CheckError(const absl::StatusOr<int64_t>& got, const std::string& quoted,
                const std::string& reason) {
  INFO("text: " << quoted);
  REQUIRE_FALSE(got.ok());
  CHECK(got.status().code() == absl::StatusCode::kInvalidArgument);
  const std::string message(got.status().message());
  CHECK(message.find("invalid quantity \"" + quoted + "\"") != std::string::npos);
  CHECK(message.find(reason) != std::string::npos);
}

}  // namespace

TEST_CASE("quantity: plain numbers and decimal points", "[quantity]") {
  CheckParses({
      {"0", 0, 0},
      {"1", 1000, 1},
      {"+1", 1000, 1},
      {"-1", -1000, -1},
      {"-0", 0, 0},
      {"1.5", 1500, 2},
      {"9.01", 9010, 10},
      {"1.", 1000, 1},    // "5." form
      {".5", 500, 1},     // ".5" form
      {"+.5", 500, 1},
      {"-.5", -500, 0},
      {".001", 1, 1},
      {"0.00500", 5, 1},
      {"000000000000000000000000000042", 42000, 42},             // leading zeros
      {"7.000000000000000000000000000000000000", 7000, 7},       // trailing zeros
      {"0.0000000000000000000000000000000000000000", 0, 0},
  });
}

TEST_CASE("quantity: every decimal SI suffix", "[quantity]") {
  CheckParses({
      {"5n", 1, 1},  // tiny positive values still round up to one unit
      {"1000000n", 1, 1},
      {"1500000n", 2, 1},
      {"4u", 1, 1},
      {"2500u", 3, 1},
      {"3m", 3, 1},
      {"100m", 100, 1},
      {"1000m", 1000, 1},
      {"8k", 8000000, 8000},
      {"100.035k", 100035000, 100035},
      {"0.0005k", 500, 1},
      {"7M", 7000000000, 7000000},
      {"10.035M", 10035000000, 10035000},
      {"6G", 6000000000000, 6000000000},
      {"1.G", 1000000000000, 1000000000},
      {"5T", 5000000000000000, 5000000000000},
      {"2P", 2000000000000000000, 2000000000000000},
      {"0.001E", 1000000000000000000, 1000000000000000},
  });
  auto e = ParseQuantity("1E");  // exa, not an exponent
  REQUIRE(e.ok());
  CHECK(*e == 1000000000000000000);
  auto e2 = ParseQuantity("1.01E");
  REQUIRE(e2.ok());
  CHECK(*e2 == 1010000000000000000);
  auto e9 = ParseQuantity("9E");
  REQUIRE(e9.ok());
  CHECK(*e9 == 9000000000000000000);
}

TEST_CASE("quantity: every binary SI suffix", "[quantity]") {
  CheckParses({
      {"1Ki", 1024000, 1024},
      {"8Ki", 8192000, 8192},
      {"7Mi", 7340032000, 7340032},
      {"6Gi", 6442450944000, 6442450944},
      {"5Ti", 5497558138880000, 5497558138880},
      {"4Pi", 4503599627370496000, 4503599627370496},
      {"0.5Mi", 524288000, 524288},
      {"1.1Ki", 1126400, 1127},             // 1126.4 rounds up
      {"100.035Ki", 102435840, 102436},     // 102435.84
      {"0.05Gi", 53687091200, 53687092},    // 53687091.2
      {".001Ki", 1024, 2},                  // 1.024
      {".000000000001Ki", 1, 1},            // 1.024e-12
      {"-0.5Ki", -512000, -512},
      {"0Ei", 0, 0},
  });
  auto ei = ParseQuantity("3Ei");
  REQUIRE(ei.ok());
  CHECK(*ei == int64_t{3} << 60);
  auto ti = ParseQuantity("0.025Ti");  // 27487790694.4
  REQUIRE(ti.ok());
  CHECK(*ti == 27487790695);
  auto pi = ParseQuantity("8191Pi");  // just below 2^63
  REQUIRE(pi.ok());
  CHECK(*pi == int64_t{8191} << 50);
  auto min = ParseQuantity("-8Ei");  // exactly INT64_MIN
  REQUIRE(min.ok());
  CHECK(*min == kMin);
}

TEST_CASE("quantity: decimal exponents", "[quantity]") {
  CheckParses({
      {"1e3", 1000000, 1000},
      {"1E6", 1000000000, 1000000},
      {"1e+3", 1000000, 1000},
      {"1e03", 1000000, 1000},
      {"1.2e3", 1200000, 1200},
      {"1.3E+6", 1300000000, 1300000},
      {"5E-3", 5, 1},
      {"0.5e-1", 50, 1},
      {"0.5e0", 500, 1},
      {"1e-9", 1, 1},
      {"1.1E-9", 1, 1},
      {"-5e-3", -5, 0},
      {"1e-2147483648", 1, 1},  // smallest int32 exponent
      {"0e2147483647", 0, 0},   // zero stays zero at any exponent
      {"123e-2147483648", 1, 1},
  });
  auto big = ParseQuantity("1E18");
  REQUIRE(big.ok());
  CHECK(*big == 1000000000000000000);
  auto mil = ParseMilliQuantity("9.223372036854775807e15");
  REQUIRE(mil.ok());
  CHECK(*mil == kMax);
}

TEST_CASE("quantity: rounds up towards +infinity for both signs", "[quantity]") {
  CheckParses({
      {"100m", 100, 1},
      {"0.1m", 1, 1},
      {"1.0001m", 2, 1},
      {"3.001n", 1, 1},
      {"-1.5", -1500, -1},
      {"-100m", -100, 0},
      {"-0.1m", 0, 0},
      {"-1.5m", -1, 0},
      {"-1.1Ki", -1126400, -1126},
      {"-2.5", -2500, -2},
      // Exactness far beyond double precision: 1 + 1e-40 still rounds up.
      {"1.0000000000000000000000000000000000000001", 1001, 2},
      {"0.9999999999999999999999999999999999999999", 1000, 1},
      {"-0.9999999999999999999999999999999999999999", -999, 0},
  });
}

TEST_CASE("quantity: int64 boundaries", "[quantity]") {
  auto max = ParseQuantity("9223372036854775807");
  REQUIRE(max.ok());
  CHECK(*max == kMax);
  auto min = ParseQuantity("-9223372036854775808");
  REQUIRE(min.ok());
  CHECK(*min == kMin);
  auto min_frac = ParseQuantity("-9223372036854775808.5");  // ceil stays in range
  REQUIRE(min_frac.ok());
  CHECK(*min_frac == kMin);
  auto max_milli = ParseMilliQuantity("9223372036854775.807");
  REQUIRE(max_milli.ok());
  CHECK(*max_milli == kMax);
  auto max_milli_m = ParseMilliQuantity("9223372036854775807m");
  REQUIRE(max_milli_m.ok());
  CHECK(*max_milli_m == kMax);
  auto min_milli = ParseMilliQuantity("-9223372036854775.8089");
  REQUIRE(min_milli.ok());
  CHECK(*min_milli == kMin);

  CheckError(ParseQuantity("9223372036854775808"), "9223372036854775808", "out of range");
  CheckError(ParseQuantity("9223372036854775807.5"), "9223372036854775807.5", "out of range");
  CheckError(ParseQuantity("-9223372036854775809"), "-9223372036854775809", "out of range");
  CheckError(ParseMilliQuantity("9223372036854775.8071"), "9223372036854775.8071",
             "out of range");
  CheckError(ParseMilliQuantity("-9223372036854775.809"), "-9223372036854775.809",
             "out of range");
  CheckError(ParseQuantity("8Ei"), "8Ei", "out of range");  // Kubernetes caps; we refuse
  CheckError(ParseQuantity("8192Pi"), "8192Pi", "out of range");
  CheckError(ParseQuantity("9223372036854775807Ki"), "9223372036854775807Ki", "out of range");
  CheckError(ParseMilliQuantity("1Ei"), "1Ei", "out of range");
  CheckError(ParseMilliQuantity("1E"), "1E", "out of range");
  CheckError(ParseQuantity("10E"), "10E", "out of range");
  CheckError(ParseQuantity("12E"), "12E", "out of range");
  CheckError(ParseQuantity("1e19"), "1e19", "out of range");
  CheckError(ParseQuantity("1e2147483647"), "1e2147483647", "out of range");
  CheckError(ParseQuantity("100000000000000000000000000000000"),
             "100000000000000000000000000000000", "out of range");
  CheckError(ParseQuantity("-99999999999999999999e-1"), "-99999999999999999999e-1",
             "out of range");
}

TEST_CASE("quantity: malformed text is rejected", "[quantity]") {
  CheckError(ParseQuantity(""), "", "empty");
  CheckError(ParseMilliQuantity(""), "", "empty");
  for (const char* text : {"abc", "Gi", "--1", "+-1", ".", "+", "-", "-.", " 1", "e3", "m",
                           "Non-Numeric", "aoeu"}) {
    CheckError(ParseQuantity(text), text, "missing digits");
    CheckError(ParseMilliQuantity(text), text, "missing digits");
  }
  for (const char* text : {"1.2.3", "1Kb", "1 Gi", "1 ", "1K", "1ki", "1KI", "1mi", "0.1am",
                           ".5i", "1i", "-3.01i", "1.1.M", "1+1.0M", "1,000", "1_000", "0x10",
                           "1Gi ", "1GiB", "1Mm"}) {
    CheckError(ParseQuantity(text), text, "unknown suffix");
    CheckError(ParseMilliQuantity(text), text, "unknown suffix");
  }
  for (const char* text : {"1e", "1e+", "1E-", "-3.01e-", "1e3.5", "1e1e1", "1e 3", "1Ee5", "1e-+3",
                           "1ex"}) {
    CheckError(ParseQuantity(text), text, "bad exponent");
  }
  CheckError(ParseQuantity("1e2147483648"), "1e2147483648", "exponent out of range");
  CheckError(ParseQuantity("1e-2147483649"), "1e-2147483649", "exponent out of range");
  CheckError(ParseQuantity("0e99999999999999999999999"), "0e99999999999999999999999",
             "exponent out of range");
  // Quotes and control bytes are escaped so the quoted text stays readable.
  CheckError(ParseQuantity(std::string("1\0", 2)), "1\\x00", "unknown suffix");
  CheckError(ParseQuantity("1m\n"), "1m\\n", "unknown suffix");
  CheckError(ParseQuantity("1\"x"), "1\\\"x", "unknown suffix");
}

TEST_CASE("quantity: FormatMilliQuantity", "[quantity]") {
  CHECK(FormatMilliQuantity(1500) == "1500m");
  CHECK(FormatMilliQuantity(2000) == "2");
  CHECK(FormatMilliQuantity(0) == "0");
  CHECK(FormatMilliQuantity(-500) == "-500m");
  CHECK(FormatMilliQuantity(-2000) == "-2");
  CHECK(FormatMilliQuantity(1) == "1m");
  CHECK(FormatMilliQuantity(1000000) == "1000");
  CHECK(FormatMilliQuantity(kMax) == "9223372036854775807m");
  CHECK(FormatMilliQuantity(kMin) == "-9223372036854775808m");
}

TEST_CASE("quantity: FormatByteQuantity", "[quantity]") {
  CHECK(FormatByteQuantity(0) == "0");
  CHECK(FormatByteQuantity(1) == "1");
  CHECK(FormatByteQuantity(1023) == "1023");
  CHECK(FormatByteQuantity(1536) == "1536");
  CHECK(FormatByteQuantity(1000000) == "1000000");
  CHECK(FormatByteQuantity(1024) == "1Ki");
  CHECK(FormatByteQuantity(1025 * 1024) == "1025Ki");
  CHECK(FormatByteQuantity(int64_t{512} << 20) == "512Mi");
  CHECK(FormatByteQuantity(int64_t{1536} << 20) == "1536Mi");
  CHECK(FormatByteQuantity(int64_t{1} << 30) == "1Gi");
  CHECK(FormatByteQuantity(int64_t{3} << 40) == "3Ti");
  CHECK(FormatByteQuantity(int64_t{5} << 50) == "5Pi");
  CHECK(FormatByteQuantity(int64_t{7} << 60) == "7Ei");
  CHECK(FormatByteQuantity(-1024) == "-1Ki");
  CHECK(FormatByteQuantity(kMax) == "9223372036854775807");
  CHECK(FormatByteQuantity(kMin) == "-8Ei");
}

TEST_CASE("quantity: formatted text parses back to the same value", "[quantity]") {
  for (int64_t v : {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{999}, int64_t{1000},
                    int64_t{1024}, int64_t{1536} << 20, int64_t{123456789}, kMax, kMin}) {
    INFO("value: " << v);
    auto milli = ParseMilliQuantity(FormatMilliQuantity(v));
    REQUIRE(milli.ok());
    CHECK(*milli == v);
    auto bytes = ParseQuantity(FormatByteQuantity(v));
    REQUIRE(bytes.ok());
    CHECK(*bytes == v);
  }
}
