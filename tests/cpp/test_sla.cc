// sla (reference §4.6, Volcano's sla.go and sla_test.go) and the Go
// duration syntax its waiting times use (api/duration.h).
#include <catch2/catch.hpp>

#include <limits>

#include "helpers.h"
#include "volcanic/api/duration.h"
#include "volcanic/api/parse.h"
#include "volcanic/framework/session.h"

using namespace volcanic;
using namespace volcanic::testing;

namespace {

constexpr int64_t kNowMs = 1'700'000'000'000;
constexpr int64_t kSecond = 1'000'000'000;  // ns

// A PodGroup created `minutes_ago` before kNowMs, optionally annotated.
json Group(const std::string& name, int minutes_ago, json annotations = json::object(),
           const std::string& phase = "Pending") {
  json g = PodGroup("ns", name, "default", 1, phase);
  g["metadata"]["creationTimestamp"] = FormatTimestamp(kNowMs - minutes_ago * 60'000);
  g["metadata"]["annotations"] = std::move(annotations);
  return g;
}

// One session over `objects` at kNowMs (or `now_ms`), opened.
struct Fixture {
  Cache cache;
  SchedulerConf conf;
  std::unique_ptr<Session> ssn;
  Fixture(const std::string& conf_text, const json& objects, int64_t now_ms = kNowMs) : conf(Conf(conf_text)) {
    Load(cache, objects);
    ssn = std::make_unique<Session>(cache, conf, SessionOptions{.now_ms = now_ms});
    REQUIRE(ssn->Open().ok());
  }
  const JobInfo& Job(const std::string& name) { return *cache.FindJob("ns/" + name); }
};

std::string SlaTiers(const std::string& sla_args, const std::string& second_tier = "") {
  std::string t = R"({"actions": "enqueue, allocate", "tiers": [{"plugins": [{"name": "sla", "arguments": )" +
                  sla_args + "}]}";
  if (!second_tier.empty()) t += R"(, {"plugins": [)" + second_tier + "]}";
  return t + "]}";
}

std::string ConfError(const std::string& sla_args) {
  auto conf = ParseSchedulerConf(json::parse(SlaTiers(sla_args)));
  REQUIRE_FALSE(conf.ok());
  return std::string(conf.status().message());
}

// A job whose minResources overcommit (1 CPU x 1.2) always rejects, so the
// JobEnqueueable vote shows whether sla's tier permitted it.
json Demanding(json group) {
  group["spec"]["minResources"] = {{"cpu", "100"}};
  return group;
}

}  // namespace

TEST_CASE("Go durations: Go's syntax and values") {
  auto ns = [](const char* text) {
    auto d = ParseGoDuration(text);
    INFO(text << ": " << d.status().ToString());
    REQUIRE(d.ok());
    return *d;
  };
  REQUIRE(ns("1h2m3s4ms5us6ns") == 3723004005006);
  REQUIRE(ns("1h2m3s4ms5\xC2\xB5s6ns") == 3723004005006);  // micro sign
  REQUIRE(ns("5\xCE\xBCs") == 5000);                         // Greek mu
  REQUIRE(ns("1.5h") == 5400 * kSecond);
  REQUIRE(ns(".5s") == kSecond / 2);
  REQUIRE(ns("1.s") == kSecond);
  REQUIRE(ns("+3m") == 180 * kSecond);
  REQUIRE(ns("-2m") == -120 * kSecond);
  REQUIRE(ns("0") == 0);
  REQUIRE(ns("-0") == 0);
  REQUIRE(ns("0.000000001s") == 1);
  REQUIRE(ns("9223372036854775807ns") == std::numeric_limits<int64_t>::max());
  REQUIRE(ns("-9223372036854775808ns") == std::numeric_limits<int64_t>::min());

  auto error = [](const char* text) {
    auto d = ParseGoDuration(text);
    REQUIRE_FALSE(d.ok());
    return std::string(d.status().message());
  };
  REQUIRE(error("") == "time: invalid duration \"\"");
  REQUIRE(error("1") == "time: missing unit in duration \"1\"");
  REQUIRE(error("3d") == "time: unknown unit \"d\" in duration \"3d\"");
  REQUIRE(error("1h 2m") == "time: unknown unit \"h \" in duration \"1h 2m\"");
  REQUIRE(error(".s") == "time: invalid duration \".s\"");
  REQUIRE(error("-") == "time: invalid duration \"-\"");
  REQUIRE(error("h") == "time: invalid duration \"h\"");
  REQUIRE(error("9223372036854775808ns") == "time: invalid duration \"9223372036854775808ns\"");
  REQUIRE(error("3000000h") == "time: invalid duration \"3000000h\"");
}

// Volcano logs a bad sla-waiting-time and runs without one ("sla error type
// placement"); we refuse the configuration instead.
TEST_CASE("sla: a bad sla-waiting-time is a configuration error naming plugin and argument") {
  REQUIRE(ConfError(R"({"sla-waiting-time": 1})") ==
          "plugin sla: argument sla-waiting-time must be a positive Go duration such as \"1h2m3s\", got \"1\" "
          "(time: missing unit in duration \"1\")");
  REQUIRE(ConfError(R"({"sla-waiting-time": "soon"})").find("got \"soon\"") != std::string::npos);
  REQUIRE(ConfError(R"({"sla-waiting-time": "0s"})") ==
          "plugin sla: argument sla-waiting-time must be a positive Go duration such as \"1h2m3s\", got \"0s\"");
  REQUIRE(ConfError(R"({"sla-waiting-time": "-5m"})").find("got \"-5m\"") != std::string::npos);
  REQUIRE(ConfError(R"({"sla-waiting-time": ["1h"]})") ==
          "plugin sla: argument sla-waiting-time must be a string, got [\"1h\"]");
  REQUIRE(ConfError(R"({"sla-waitingtime": "1h"})") ==
          "plugin sla: unknown argument \"sla-waitingtime\"; known arguments: sla-waiting-time");
  REQUIRE(ParseSchedulerConf(json::parse(SlaTiers(R"({"sla-waiting-time": "1h2m3s4ms5us6ns"})"))).ok());
}

// sla_test.go "sla normal placement": job1 has no waiting time of its own and
// takes the argument's 3m, job2 waits 1h: job1's deadline comes first, and
// job1, created long ago, is enqueueable.
TEST_CASE("sla: the earlier deadline goes first; the argument applies to jobs without an annotation") {
  Fixture f(SlaTiers(R"({"sla-waiting-time": "3m"})"),
            json::array({Group("job1", 5), Group("job2", 10, {{"volcano.sh/sla-waiting-time", "1h"}})}));
  REQUIRE(f.ssn->JobOrder(f.Job("job1"), f.Job("job2")));
  REQUIRE_FALSE(f.ssn->JobOrder(f.Job("job2"), f.Job("job1")));
  REQUIRE(f.ssn->JobEnqueueable(f.Job("job1")));
}

// sla_test.go "none placement": without the argument job1 has no waiting
// time and goes after job2, although it is older.
TEST_CASE("sla: jobs without a waiting time go last") {
  Fixture f(SlaTiers("{}"), json::array({Group("job1", 60), Group("job2", 10, {{"sla-waiting-time", "1h"}}),
                                          Group("job3", 30)}));
  REQUIRE_FALSE(f.ssn->JobOrder(f.Job("job1"), f.Job("job2")));
  REQUIRE(f.ssn->JobOrder(f.Job("job2"), f.Job("job1")));
  // Two jobs without one tie in sla and fall back to creation time.
  REQUIRE(f.ssn->JobOrder(f.Job("job1"), f.Job("job3")));
  REQUIRE(f.ssn->JobEnqueueable(f.Job("job1")));
}

TEST_CASE("sla: Permit once the job has waited its time, Abstain before") {
  std::string overcommit = R"({"name": "overcommit"})";
  json objects = json::array(
      {Node("n1", "1", "1Gi"), Demanding(Group("waited", 5)), Demanding(Group("young", 2)),
       Demanding(Group("exactly", 3)),
       Demanding(Group("own-1h", 10, {{"volcano.sh/sla-waiting-time", "1h"}})),
       Demanding(Group("own-5m", 10, {{"volcano.sh/sla-waiting-time", "5m"}})),
       Demanding(Group("malformed", 5, {{"volcano.sh/sla-waiting-time", "soon"}})),
       Demanding(Group("bare-fallback", 10, {{"volcano.sh/sla-waiting-time", "0s"}, {"sla-waiting-time", "9m"}}))});
  Fixture f(SlaTiers(R"({"sla-waiting-time": "3m"})", overcommit), objects);
  REQUIRE(f.ssn->JobEnqueueable(f.Job("waited")));        // 5m >= 3m: Permit ends the vote in tier 1
  REQUIRE_FALSE(f.ssn->JobEnqueueable(f.Job("young")));   // 2m < 3m: Abstain, overcommit rejects
  REQUIRE(f.ssn->JobEnqueueable(f.Job("exactly")));       // waited exactly 3m: Permit
  REQUIRE_FALSE(f.ssn->JobEnqueueable(f.Job("own-1h")));  // the annotation overrides the argument
  REQUIRE(f.ssn->JobEnqueueable(f.Job("own-5m")));
  REQUIRE(f.ssn->JobEnqueueable(f.Job("malformed")));     // ignored: the argument's 3m applies
  REQUIRE(f.ssn->JobEnqueueable(f.Job("bare-fallback"))); // non-positive first key: the bare key's 9m
  REQUIRE(f.ssn->JobPipelined(f.Job("waited")));
  // Without sla the same overcommit rejects them all.
  Fixture plain(R"({"actions": "enqueue", "tiers": [{"plugins": [{"name": "overcommit"}]}]})", objects);
  REQUIRE_FALSE(plain.ssn->JobEnqueueable(plain.Job("waited")));
}

TEST_CASE("sla: JobPipelined is Permit after the wait, so a later tier's gang cannot veto it") {
  std::string gang = R"({"name": "gang"})";
  json waited = Group("waited", 5, json::object(), "Inqueue"), young = Group("young", 1, json::object(), "Inqueue");
  waited["spec"]["minMember"] = 2;
  young["spec"]["minMember"] = 2;
  json objects = json::array({Node("n1", "4", "4Gi"), waited, young, Pod("ns", "w0", "1", "1Gi", "waited"),
                              Pod("ns", "w1", "1", "1Gi", "waited"), Pod("ns", "y0", "1", "1Gi", "young"),
                              Pod("ns", "y1", "1", "1Gi", "young")});
  Fixture f(SlaTiers(R"({"sla-waiting-time": "3m"})", gang), objects);
  REQUIRE(f.ssn->JobPipelined(f.Job("waited")));
  REQUIRE_FALSE(f.ssn->JobPipelined(f.Job("young")));  // Abstain: gang's Reject (0 of 2 ready) decides
}

TEST_CASE("sla: enable flags gate its votes and its order") {
  std::string conf = R"({"actions": "enqueue", "tiers": [
      {"plugins": [{"name": "sla", "enableJobEnqueued": false, "enableJobOrder": false,
                    "arguments": {"sla-waiting-time": "3m"}}]},
      {"plugins": [{"name": "overcommit"}]}]})";
  Fixture f(conf, json::array({Node("n1", "1", "1Gi"), Demanding(Group("old", 5)),
                               Group("older-own", 20, {{"sla-waiting-time", "1h"}})}));
  REQUIRE_FALSE(f.ssn->JobEnqueueable(f.Job("old")));
  REQUIRE(f.ssn->JobOrder(f.Job("older-own"), f.Job("old")));  // creation time decides
}

TEST_CASE("sla: the session clock decides, not the wall clock") {
  json objects = json::array({Node("n1", "1", "1Gi"), Demanding(Group("job", 5))});
  std::string conf = SlaTiers(R"({"sla-waiting-time": "10m"})", R"({"name": "overcommit"})");
  Fixture early(conf, objects);
  REQUIRE_FALSE(early.ssn->JobEnqueueable(early.Job("job")));
  Fixture later(conf, objects, kNowMs + 5 * 60'000);
  REQUIRE(later.ssn->JobEnqueueable(later.Job("job")));
}

TEST_CASE("sla: asks for a session at the earliest deadline still ahead of a waiting job") {
  json running = Group("running-young", 1, json::object(), "Running");  // nothing left to wait for
  json objects = json::array({Node("n1", "1", "1Gi"), Demanding(Group("waited", 5)),
                              Demanding(Group("young", 2)), running,
                              Demanding(Group("own-1h", 10, {{"volcano.sh/sla-waiting-time", "1h"}}))});
  Fixture f(SlaTiers(R"({"sla-waiting-time": "3m"})", R"({"name": "overcommit"})"), objects);
  Decisions d;
  f.ssn->RunActions(&d);
  f.ssn->Close(&d);
  REQUIRE(d.wake_at_ms == kNowMs + 60'000);  // young's 3 minutes are up in one
  Fixture none(SlaTiers(R"({"sla-waiting-time": "3m"})"), json::array({Node("n1", "1", "1Gi"), running}));
  Decisions quiet;
  none.ssn->RunActions(&quiet);
  none.ssn->Close(&quiet);
  REQUIRE_FALSE(quiet.wake_at_ms.has_value());
}
