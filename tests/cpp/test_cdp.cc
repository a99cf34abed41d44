// The cdp (cooldown protection) plugin, ported from Volcano v1.15.1
// pkg/scheduler/plugins/cdp/cdp_test.go: Test_CooldownTimePlugin_podPreemptStableTime
// and TestPreemptableFn, through Session::Preemptable and Reclaimable with
// cdp alone configured. Volcano's "now" is the wall clock; here the
// session's clock (SessionOptions::now_ms). Whole preempt sessions are
// scenarios (tests/scenarios/cdp).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "helpers.h"
#include "volcanic/api/errors.h"
#include "volcanic/framework/session.h"

using namespace volcanic;
using namespace volcanic::testing;

namespace {

// 2024-01-01T00:13:20Z: 800 s after midnight.
constexpr int64_t kNowMs = (int64_t{1704067200} + 800) * 1000;
constexpr char k800sAgo[] = "2024-01-01T00:00:00Z";
constexpr char k100sAgo[] = "2024-01-01T00:11:40Z";

// makePod: Running with PodScheduled=True at `scheduled` ("" for a Pending
// pod without the condition), preemptable, with the cooldown in `where`
// ("labels" or "annotations").
json CooldownPod(const std::string& name, const std::string& cooldown, const std::string& scheduled,
                 const std::string& where = "annotations") {
  json p = Pod("default", name, "1", "1Gi", "test-group", scheduled.empty() ? "" : "n1",
               scheduled.empty() ? "Pending" : "Running");
  p["metadata"]["labels"] = {{"volcano.sh/preemptable", "true"}};
  if (!cooldown.empty()) p["metadata"][where]["volcano.sh/cooldown-time"] = cooldown;
  if (!scheduled.empty())
    p["status"]["conditions"] =
        json::array({{{"type", "PodScheduled"}, {"status", "True"}, {"lastTransitionTime", scheduled}}});
  return p;
}

// The candidates' victims by name, through Preemptable and Reclaimable (cdp
// registers one filter for both).
std::vector<std::string> Victims(const json& pods) {
  Cache c;
  json objects = json::array({Node("n1", "16", "32Gi"), Queue("q"), PodGroup("default", "test-group", "q", 1, "Running"),
                              PodGroup("default", "preemptor", "q", 1)});
  for (const json& p : pods) objects.push_back(p);
  objects.push_back(Pod("default", "preemptor", "1", "1Gi", "preemptor"));
  Load(c, objects);
  SchedulerConf conf = Conf(R"({"actions": "preempt", "tiers": [{"plugins": [{"name": "cdp"}]}]})");
  SessionOptions opts;
  opts.now_ms = kNowMs;
  Session ssn(c, conf, opts);
  REQUIRE(ssn.Open().ok());
  std::vector<TaskInfo*> candidates;
  for (const json& p : pods) candidates.push_back(c.FindTask("default/" + p["metadata"]["name"].get<std::string>()));
  const TaskInfo& preemptor = *c.FindTask("default/preemptor");
  std::vector<std::string> out;
  for (TaskInfo* t : ssn.Preemptable(preemptor, candidates)) out.push_back(t->name);
  std::vector<std::string> reclaim;
  for (TaskInfo* t : ssn.Reclaimable(preemptor, candidates)) reclaim.push_back(t->name);
  CHECK(reclaim == out);
  return out;
}

}  // namespace

TEST_CASE("cdp: TestPreemptableFn", "[cdp]") {
  // task1 is within its 600 s (scheduled 100 s ago); task2's cooldown does
  // not parse; task3 was scheduled 800 s ago.
  CHECK(Victims(json::array({CooldownPod("task1", "600s", k100sAgo), CooldownPod("task2", "600abcde", k100sAgo),
                             CooldownPod("task3", "600s", k800sAgo)})) ==
        std::vector<std::string>{"task2", "task3"});
}

TEST_CASE("cdp: Test_CooldownTimePlugin_podPreemptStableTime", "[cdp]") {
  SECTION("normal: 600s is a cooldown") {
    CHECK(Victims(json::array({CooldownPod("p", "600s", k100sAgo)})).empty());
  }
  SECTION("not-enabled: 600abcde is none") {
    CHECK(Victims(json::array({CooldownPod("p", "600abcde", k100sAgo)})) == std::vector<std::string>{"p"});
  }
  SECTION("the label is read before the annotation, even when it does not parse") {
    json p = CooldownPod("p", "600s", k100sAgo, "labels");
    CHECK(Victims(json::array({p})).empty());
    p["metadata"]["labels"]["volcano.sh/cooldown-time"] = "bad";
    p["metadata"]["annotations"]["volcano.sh/cooldown-time"] = "600s";
    CHECK(Victims(json::array({p})) == std::vector<std::string>{"p"});
  }
  SECTION("a pod without the cooldown, or not Running, is a victim") {
    CHECK(Victims(json::array({CooldownPod("a", "", k100sAgo)})) == std::vector<std::string>{"a"});
    json bound = CooldownPod("b", "600s", k100sAgo);
    bound["status"]["phase"] = "Pending";  // bound, not yet Running
    CHECK(Victims(json::array({bound})) == std::vector<std::string>{"b"});
  }
}

TEST_CASE("cdp: a session asks to run again when a cooldown ends", "[cdp]") {
  Cache c;
  Load(c, json::array({Node("n1", "16", "32Gi"), Queue("q"), PodGroup("default", "test-group", "q", 1, "Running"),
                       CooldownPod("p", "600s", k100sAgo)}));
  SchedulerConf conf = Conf(R"({"actions": "preempt", "tiers": [{"plugins": [{"name": "cdp"}]}]})");
  SessionOptions opts;
  opts.now_ms = kNowMs;
  Session ssn(c, conf, opts);
  REQUIRE(ssn.Open().ok());
  TaskInfo* t = c.FindTask("default/p");
  CHECK(ssn.Preemptable(*t, {t}).empty());
  Decisions d;
  ssn.Close(&d);
  REQUIRE(d.wake_at_ms);
  CHECK(*d.wake_at_ms == kNowMs + 500 * 1000 + 1);
}

TEST_CASE("cdp: takes no arguments", "[cdp]") {
  auto conf = ParseSchedulerConf(
      json::parse(R"({"actions": "preempt", "tiers": [{"plugins": [{"name": "cdp", "arguments": {"x": 1}}]}]})"));
  CHECK(IsConfigError(conf.status()));
}
