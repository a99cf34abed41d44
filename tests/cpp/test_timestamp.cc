// Tests for ParseTimestampMs (volcanic/api/parse.h): metadata timestamps as
// Unix milliseconds. The API server's own form is read by a fast path; every
// answer must be absl::ParseTime's (RFC 3339), and what it refuses is refused.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "volcanic/api/parse.h"

namespace {

absl::StatusOr<int64_t> ByAbsl(const std::string& text) {
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, text, &t, &err)) return absl::InvalidArgumentError(err);
  return absl::ToUnixMillis(t);
}

}  // namespace

TEST_CASE("timestamps read as absl reads RFC 3339", "[parse]") {
  const std::vector<std::string> texts = {
      // The API server's form, over leap years, century rules and month ends.
      "1970-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "2024-01-01T00:00:00Z", "2024-02-29T12:34:56Z",
      "2023-02-28T23:59:59Z", "2000-02-29T00:00:00Z", "2100-02-28T00:00:00Z", "1900-03-01T00:00:00Z",
      "2024-12-31T23:59:59Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2024-04-30T08:00:00Z",
      // Other RFC 3339 forms: left to absl.
      "2024-01-01T00:00:00.250Z", "2024-01-01T01:00:00+01:00", "2024-01-01t00:00:00z",
      // Not times: refused by both.
      "2023-02-29T00:00:00Z", "2100-02-29T00:00:00Z", "2024-04-31T00:00:00Z", "2024-13-01T00:00:00Z",
      "2024-00-10T00:00:00Z", "2024-01-01T24:00:00Z", "2024-01-01T00:60:00Z", "2024-01-01T00:00:61Z",
      "2024-01-01 00:00:00Z", "2024-1-01T00:00:00Z", "2024-01-01T00:00:0xZ", "", "yesterday"};
  for (const std::string& text : texts) {
    INFO(text);
    auto got = volcanic::ParseTimestampMs(text);
    auto want = ByAbsl(text);
    REQUIRE(got.ok() == want.ok());
    if (want.ok()) CHECK(*got == *want);
  }
  CHECK(*volcanic::ParseTimestampMs("2024-01-01T00:00:00Z") == 1704067200000);
}
