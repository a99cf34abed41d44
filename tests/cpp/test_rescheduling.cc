// The rescheduling plugin's lowNodeUtilization strategy through the shuffle
// action, over sessions of one Scheduler on the session clock. Volcano
// v1.15.1 has no unit test for the plugin; each rule is cited from its code
// (pkg/scheduler/plugins/rescheduling: rescheduling.go, rescheduling_util.go,
// low_node_utilization.go, node_utilization_util.go).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "helpers.h"
#include "volcanic/framework/scheduler.h"

using namespace volcanic;
using namespace volcanic::testing;

namespace {

constexpr int64_t kStart = 1'700'000'000'000;
constexpr int64_t kInterval = 60'000;  // interval: 1m

std::string ReschedulingConf(const std::string& metrics_period = "10m", json params = nullptr) {
  if (params.is_null())
    params = {{"thresholds", {{"cpu", 20}, {"memory", 20}}}, {"targetThresholds", {{"cpu", 50}, {"memory", 50}}}};
  json plugin = {{"name", "rescheduling"},
                 {"arguments",
                  {{"interval", "1m"},
                   {"metricsPeriod", metrics_period},
                   {"strategies", json::array({{{"name", "lowNodeUtilization"}, {"params", params}}})}}}};
  return json{{"actions", "shuffle"}, {"tiers", json::array({{{"plugins", json::array({plugin})}}})}}.dump();
}

// A Running 1-CPU 1Gi pod on `node` in its own running gang of one.
json RunningPod(const std::string& name, const std::string& node, json priority, bool guaranteed = false) {
  json p = Pod("ns", name, "1", "1Gi", name, node, "Running");
  if (!priority.is_null()) p["spec"]["priority"] = priority;
  if (guaranteed) p["spec"]["containers"][0]["resources"]["limits"] = {{"cpu", "1"}, {"memory", "1Gi"}};
  return p;
}

json NodeWithCapacity(const std::string& name) {
  json n = Node(name, "4", "8Gi");
  n["status"]["capacity"] = n["status"]["allocatable"];
  return n;
}

struct Cluster {
  Scheduler s;
  explicit Cluster(const std::string& conf, json pods) : s(Conf(conf)) {
    json objects = json::array({Queue("q1"), NodeWithCapacity("hot"), NodeWithCapacity("cold"),
                                NodeWithCapacity("warm")});
    for (const json& p : pods) {
      const std::string name = p["metadata"]["name"];
      objects.push_back(PodGroup("ns", name, "q1", 1, "Running"));
      objects.push_back(p);
    }
    Load(s.cache(), objects);
    SetLoad("hot", 90, 40);
    SetLoad("cold", 10, 10);
    SetLoad("warm", 30, 30);
  }
  void SetLoad(const std::string& node, double cpu, double memory) {
    REQUIRE(s.cache().SetNodeUsage(node, NodeUsage{cpu, memory, kStart}).ok());
  }
  std::vector<std::string> Evictions(int64_t now) {
    auto d = s.RunOnce(now);
    REQUIRE(d.ok());
    return d->evictions;
  }
};

json HotPods() {
  return json::array({RunningPod("a-guaranteed", "hot", 10, true), RunningPod("b-burstable", "hot", 10),
                      RunningPod("c-no-priority", "hot", nullptr), RunningPod("d-low", "hot", 5),
                      RunningPod("e-elsewhere", "warm", 0)});
}

}  // namespace

TEST_CASE("rescheduling: runs once per interval, the first interval counting from the first session",
          "[rescheduling]") {
  // rescheduling_util.go timeToRun: lastRescheduleTime starts at the process start and a run
  // is due once now is after it plus the interval.
  Cluster c(ReschedulingConf(), HotPods());
  CHECK(c.Evictions(kStart).empty());
  CHECK(c.Evictions(kStart + kInterval).empty());
  CHECK_FALSE(c.Evictions(kStart + kInterval + 1).empty());
}

TEST_CASE("rescheduling: lowNodeUtilization moves the hot node's pods, lowest priority first, until its load "
          "is under the target",
          "[rescheduling]") {
  Cluster c(ReschedulingConf(), HotPods());
  c.Evictions(kStart);
  // hot: cpu 90% >= 50%. sortPods: no spec.priority first, then priority 5; each 1-CPU pod
  // takes 25% of the 4-CPU capacity: 90 -> 65 -> 40, under the target, so two pods go.
  // The room on the one low node (cold) is 50% - 10% of 4 CPUs = 1600m: never exhausted.
  CHECK(c.Evictions(kStart + kInterval + 1) == std::vector<std::string>{"ns/c-no-priority", "ns/d-low"});
}

TEST_CASE("rescheduling: at equal priority BestEffort goes before Burstable before Guaranteed", "[rescheduling]") {
  json pods = json::array({RunningPod("a-guaranteed", "hot", 10, true), RunningPod("b-burstable", "hot", 10)});
  json best_effort = Pod("ns", "c-best-effort", "0", "0", "c-best-effort", "hot", "Running");
  best_effort["spec"]["containers"][0]["resources"] = json::object();
  best_effort["spec"]["priority"] = 10;
  pods.push_back(best_effort);
  Cluster c(ReschedulingConf(), pods);
  c.SetLoad("hot", 74, 40);
  c.Evictions(kStart);
  // The BestEffort pod lowers no load (74%), the Burstable one brings it to 49%: the
  // Guaranteed one stays. (shuffle evicts the victims in pod-key order.)
  CHECK(c.Evictions(kStart + kInterval + 1) == std::vector<std::string>{"ns/b-burstable", "ns/c-best-effort"});
}

TEST_CASE("rescheduling: moving stops once the room on the low nodes is exactly used up", "[rescheduling]") {
  // Low below 30% cpu: cold at 25% has room int(50% of 4000m) - int(25% of 4000m) = 1000m,
  // one pod's request. After it hot is at 65%, still over its 50% target, but the room is
  // exactly 0 and isContinueEvictPods stops (only exactly 0 stops it, not a negative room).
  json params = {{"thresholds", {{"cpu", 30}, {"memory", 20}}}, {"targetThresholds", {{"cpu", 50}, {"memory", 50}}}};
  Cluster c(ReschedulingConf("10m", params), HotPods());
  c.SetLoad("cold", 25, 10);
  c.Evictions(kStart);
  CHECK(c.Evictions(kStart + kInterval + 1) == std::vector<std::string>{"ns/c-no-priority"});
}

TEST_CASE("rescheduling: without low nodes, with only low nodes, or reading another window, nothing moves",
          "[rescheduling]") {
  SECTION("the loads are read for metricsPeriod, and only the 10m window is ever reported") {
    Cluster c(ReschedulingConf("5m"), HotPods());
    c.Evictions(kStart);
    CHECK(c.Evictions(kStart + kInterval + 1).empty());
  }
  SECTION("no node is low") {
    Cluster c(ReschedulingConf(), HotPods());
    c.SetLoad("cold", 30, 10);
    c.Evictions(kStart);
    CHECK(c.Evictions(kStart + kInterval + 1).empty());
  }
  SECTION("an unschedulable node is never low") {
    Cluster c(ReschedulingConf(), HotPods());
    json cold = NodeWithCapacity("cold");
    cold["spec"]["unschedulable"] = true;
    REQUIRE(c.s.cache().Upsert(cold).ok());
    c.Evictions(kStart);
    CHECK(c.Evictions(kStart + kInterval + 1).empty());
  }
}

TEST_CASE("rescheduling: arguments Volcano would misread are refused by name", "[rescheduling]") {
  auto refused = [](const std::string& conf) { return !ParseSchedulerConf(json::parse(conf)).ok(); };
  CHECK(refused(ReschedulingConf("10m", {{"thresholds", {{"cpu", 20.5}}}})));
  CHECK(refused(ReschedulingConf("10m", {{"thresholds", {{"gpu", 20}}}})));
  CHECK(refused(ReschedulingConf("10m", {{"evictAll", true}})));
  json plugin = {{"name", "rescheduling"},
                 {"arguments", {{"strategies", json::array({{{"name", "offlineOnly"}}})}}}};
  json conf = {{"actions", "shuffle"}, {"tiers", json::array({{{"plugins", json::array({plugin})}}})}};
  auto parsed = ParseSchedulerConf(conf);
  REQUIRE_FALSE(parsed.ok());
  CHECK(std::string(parsed.status().message()).find("unknown strategy \"offlineOnly\"") != std::string::npos);
  // Fields Volcano declares and never reads are accepted.
  CHECK_FALSE(refused(ReschedulingConf("10m", {{"nodeFit", true}, {"thresholdPriorityClassName", "x"}})));
}
