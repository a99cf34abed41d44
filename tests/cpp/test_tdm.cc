// tdm's revocable-zone windows (plugins/tdm.h) and its arguments.
#include <catch2/catch.hpp>

#include "helpers.h"
#include "volcanic/api/errors.h"
#include "volcanic/framework/scheduler.h"
#include "volcanic/plugins/tdm.h"

using namespace volcanic;
using namespace volcanic::testing;

namespace {

constexpr int64_t kNow = 1700000000000;  // 2023-11-14T22:13:20Z, the scenarios' clock
constexpr int64_t kMidnight = 1699920000000;  // 2023-11-14T00:00:00Z

// The window's length in seconds on kNow's day; -1 when it does not parse.
int64_t Delta(const std::string& text) {
  auto w = ParseRevocableWindow(text);
  if (!w.ok()) return -1;
  WindowSpan span = SpanOn(*w, kNow);
  return span.end_s - span.start_s;
}

std::string ConfigMessage(const std::string& args) {
  auto conf = ParseSchedulerConf(
      json::parse(R"({"actions": "allocate", "tiers": [{"plugins": [{"name": "tdm", "arguments": )" + args + "}]}]}"));
  REQUIRE(IsConfigError(conf.status()));
  return std::string(conf.status().message());
}

}  // namespace

// volcano pkg/scheduler/plugins/tdm/tdm_test.go Test_parseRevocableZone, cases 0-8.
TEST_CASE("revocable zone windows parse as Volcano's", "[tdm]") {
  REQUIRE(Delta("00:00_01:00") == -1);
  REQUIRE(Delta("00:00-01:00") == 60 * 60);
  REQUIRE(Delta("0:00-23:59") == 23 * 60 * 60 + 59 * 60);
  REQUIRE(Delta("0:00") == -1);
  REQUIRE(Delta("1:00-0:00") == 23 * 60 * 60);
  REQUIRE(Delta("1:0-0:0") == -1);
  REQUIRE(Delta("   1:00-0:00    ") == 23 * 60 * 60);
  REQUIRE(Delta("23:59-23:59") == 24 * 60 * 60);
  REQUIRE(Delta("63:59-23:59") == -1);
}

TEST_CASE("revocable zone windows: other malformed texts", "[tdm]") {
  for (const char* bad : {"", "-", "1:00-2:00-3:00", "001:00-2:00", "1:60-2:00", "24:00-1:00", "1:00 - 2:00",
                          "a:00-1:00", ":00-1:00"})
    REQUIRE_FALSE(ParseRevocableWindow(bad).ok());
}

TEST_CASE("a window is open from its start to its end, inclusive to the second", "[tdm]") {
  RevocableWindow w = *ParseRevocableWindow("10:00-21:00");
  const int64_t ten = kMidnight + 10 * 3600 * 1000, nine_pm = kMidnight + 21 * 3600 * 1000;
  REQUIRE_FALSE(WindowOpen(w, ten - 1));
  REQUIRE(WindowOpen(w, ten));
  REQUIRE(WindowOpen(w, nine_pm + 999));
  REQUIRE_FALSE(WindowOpen(w, nine_pm + 1000));
  REQUIRE(NextWindowChangeMs(w, ten - 5000) == ten);
  REQUIRE(NextWindowChangeMs(w, ten) == nine_pm + 1000);
  REQUIRE(NextWindowChangeMs(w, nine_pm + 1000) == kMidnight + 24 * 3600 * 1000);
}

TEST_CASE("a window across midnight is open until midnight only, as Volcano's", "[tdm]") {
  RevocableWindow w = *ParseRevocableWindow("22:00-02:00");
  REQUIRE(WindowOpen(w, kMidnight + 23 * 3600 * 1000));
  REQUIRE_FALSE(WindowOpen(w, kMidnight + 1 * 3600 * 1000));
  REQUIRE(WindowOpen(*ParseRevocableWindow("0:00-0:00"), kNow));
  REQUIRE_FALSE(WindowOpen(*ParseRevocableWindow("0:00-0:01"), kNow));
}

TEST_CASE("tdm refuses unknown arguments, bad windows and bad periods by name", "[tdm]") {
  REQUIRE(ConfigMessage(R"({"tdm.evict.perod": "1m"})") ==
          "plugin tdm: unknown argument \"tdm.evict.perod\"; known arguments: tdm.evict.period, "
          "tdm.revocable-zone.<name>");
  REQUIRE(ConfigMessage(R"({"tdm.revocable-zone.rz1": "10:00_21:00"})") ==
          "plugin tdm: argument tdm.revocable-zone.rz1: \"10:00_21:00\" is not a daily window HH:MM-HH:MM");
  REQUIRE(ConfigMessage(R"({"tdm.evict.period": "1"})").rfind("plugin tdm: argument tdm.evict.period: ", 0) == 0);
  REQUIRE(ParseSchedulerConf(json::parse(
                                 R"({"actions": "allocate", "tiers": [{"plugins": [{"name": "tdm", "arguments":
                                     {"tdm.revocable-zone.rz1": "10:00-21:00", "tdm.evict.period": "100ms"}}]}]})"))
              .ok());
}

namespace {

constexpr char kShuffleConf[] = R"({"actions": "shuffle", "tiers": [{"plugins": [{"name": "tdm", "enabledVictim": true,
    "arguments": {"tdm.revocable-zone.rz1": "0:00-0:01", "tdm.evict.period": "1m"}}]}]})";

void LoadRevocable(Scheduler& s) {
  json pod = Pod("ns", "p", "1", "1Gi", "pg", "n1", "Running");
  pod["metadata"]["annotations"]["volcano.sh/preemptable"] = "true";
  Load(s.cache(), json::array({Node("n1", "4", "8Gi", {{"volcano.sh/revocable-zone", "rz1"}}), Queue("q1"),
                               PodGroup("ns", "pg", "q1", 0, "Running"), pod}));
}

std::vector<std::string> Evictions(Scheduler& s, int64_t at_ms) {
  auto d = s.RunOnce(at_ms);
  REQUIRE(d.ok());
  return d->evictions;
}

}  // namespace

// Volcano keeps the last look in a package global; volcanic in each
// scheduler's cache, so it outlives a session but not the scheduler.
TEST_CASE("tdm looks for victims at most once per evict period, per scheduler", "[tdm]") {
  const int64_t s = 1000;
  Scheduler first(Conf(kShuffleConf));
  LoadRevocable(first);
  auto d = first.RunOnce(kMidnight + 30 * s);  // the zone is open: no victim, but a look
  REQUIRE(d.ok());
  REQUIRE(d->evictions.empty());
  REQUIRE(Evictions(first, kMidnight + 70 * s).empty());  // closed, but within the period
  auto waiting = first.RunOnce(kMidnight + 80 * s);
  REQUIRE(waiting.ok());
  REQUIRE(waiting->wake_at_ms == kMidnight + 90 * s);
  REQUIRE(Evictions(first, kMidnight + 90 * s) == std::vector<std::string>{"ns/p"});

  Scheduler second(Conf(kShuffleConf));  // a scheduler of its own: no earlier look
  LoadRevocable(second);
  REQUIRE(Evictions(second, kMidnight + 70 * s) == std::vector<std::string>{"ns/p"});
}
