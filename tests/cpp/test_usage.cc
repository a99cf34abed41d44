// The usage plugin's predicate and node scores, ported from Volcano v1.15.1
// pkg/scheduler/plugins/usage/usage_test.go (TestUsage_predicateFn,
// TestUsage_nodeOrderFn): every case, every node, with the nodes' loads
// recorded as the metrics source would (Cache::SetNodeUsage). Volcano's
// UnschedulableAndUnresolvable is a misfit preemption cannot resolve here
// (Session::PredicateForPreempt false). Placements in whole sessions are
// scenarios (tests/scenarios/usage).
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "topology_helpers.h"

using namespace volcanic;
using namespace volcanic::testing;

namespace {

constexpr int64_t kNow = 1'700'000'000'000;
constexpr int64_t kMinute = 60'000;

struct NodeLoad {
  double cpu, memory;
  int64_t age_ms;  // -1: never reported (Go's zero time)
};

std::string UsageConf(int cpu_weight, int memory_weight) {
  json plugin = {{"name", "usage"},
                 {"enablePredicate", true},
                 {"enableNodeOrder", true},
                 {"arguments",
                  {{"usage.weight", 5},
                   {"cpu.weight", cpu_weight},
                   {"memory.weight", memory_weight},
                   {"thresholds", {{"cpu", 80}, {"mem", 80}}}}}};
  return json{{"actions", "allocate"}, {"tiers", json::array({{{"plugins", json::array({plugin})}}})}}.dump();
}

// One session over nodes n1.. with the given loads and the Go tests' pod p1.
struct Fixture {
  Cache cache;
  SchedulerConf conf;
  std::unique_ptr<Session> ssn;
  const TaskInfo* task = nullptr;

  Fixture(const std::map<std::string, NodeLoad>& loads, const std::string& conf_text) : conf(Conf(conf_text)) {
    json objects = json::array({Queue("q1"), PodGroup("c1", "pg1", "q1", 0, "Pending"), Pod("c1", "p1", "1", "1Gi", "pg1")});
    for (const auto& [name, load] : loads) objects.push_back(Node(name, "4", "8Gi"));
    volcanic::testing::Load(cache, objects);
    for (const auto& [name, load] : loads)
      REQUIRE(cache.SetNodeUsage(name, NodeUsage{load.cpu, load.memory, load.age_ms < 0 ? -1 : kNow - load.age_ms}).ok());
    SessionOptions opts;
    opts.now_ms = kNow;
    ssn = std::make_unique<Session>(cache, conf, opts);
    REQUIRE(ssn->Open().ok());
    task = cache.FindTask("c1/p1");
    REQUIRE(task != nullptr);
  }
};

// The loads of TestUsage_predicateFn.
const std::map<std::string, NodeLoad> kPredicateLoads = {
    {"n1", {81, 60, 0}}, {"n2", {60, 81, 0}}, {"n3", {80, 79, 0}}, {"n4", {90, 81, 6 * kMinute}}, {"n5", {90, 81, -1}}};

void CheckPredicate(const std::string& node, const std::string& reason) {
  Fixture f({{node, kPredicateLoads.at(node)}}, UsageConf(1, 1));
  std::vector<std::string> reasons;
  NodeInfo* n = FindNode(*f.ssn, node);
  bool fits = f.ssn->Predicate(*f.task, *n, &reasons);
  CHECK(fits == reason.empty());
  if (reason.empty()) return;
  CHECK(reasons == std::vector<std::string>{reason});
  CHECK_FALSE(f.ssn->PredicateForPreempt(*f.task, *n));  // UnschedulableAndUnresolvable
}

}  // namespace

TEST_CASE("usage: TestUsage_predicateFn", "[usage]") {
  SECTION("The node cannot be scheduled, because of the CPU load of the node exceeds the upper limit.") {
    CheckPredicate("n1", "the CPU load of the node exceeds the upper limit.");
  }
  SECTION("The node cannot be scheduled, because of the memory load of the node exceeds the upper limit.") {
    CheckPredicate("n2", "the memory load of the node exceeds the upper limit.");
  }
  SECTION("The node can be scheduled, because of the CPU usage and memory usage do not exceed the upper limit.") {
    CheckPredicate("n3", "");
  }
  SECTION("The node can be scheduled, because of the metrics are not updated in the latest 5 minutes") {
    CheckPredicate("n4", "");
  }
  SECTION("The node can be scheduled, because of the metric time is in the initial state") {
    CheckPredicate("n5", "");
  }
}

TEST_CASE("usage: TestUsage_nodeOrderFn", "[usage]") {
  const std::map<std::string, NodeLoad> loads = {
      {"n1", {30, 50, 0}}, {"n2", {60, 50, 0}}, {"n3", {60, 80, 0}}, {"n4", {10, 20, 6 * kMinute}}, {"n5", {0, 0, -1}}};
  SECTION("Node scoring in the default weight configuration scenario.") {
    Fixture f(loads, UsageConf(1, 1));
    CheckScores(ScoreNodes(*f.ssn, *f.task, {"n1", "n2", "n3", "n4", "n5"}),
                {{"n1", 300}, {"n2", 225}, {"n3", 150}, {"n4", 0}, {"n5", 0}});
  }
  SECTION("Node scoring gives priority to memory resources") {
    Fixture f(loads, UsageConf(2, 8));
    CheckScores(ScoreNodes(*f.ssn, *f.task, {"n1", "n2", "n3", "n4", "n5"}),
                {{"n1", 270}, {"n2", 240}, {"n3", 120}, {"n4", 0}, {"n5", 0}});
  }
}

TEST_CASE("usage: metrics exactly five minutes old still count", "[usage]") {
  Fixture f({{"n1", {90, 10, 5 * kMinute}}}, UsageConf(1, 1));
  std::vector<std::string> reasons;
  CHECK_FALSE(f.ssn->Predicate(*f.task, *FindNode(*f.ssn, "n1"), &reasons));  // usage.go: stale only when older
}

TEST_CASE("usage: a load is recorded only for a node the cache has, and an equal one is no change", "[usage]") {
  Cache cache;
  volcanic::testing::Load(cache, json::array({Node("n1", "4", "8Gi")}));
  CHECK(absl::IsNotFound(cache.SetNodeUsage("nope", NodeUsage{1, 1, 0}).status()));
  CHECK(*cache.SetNodeUsage("n1", NodeUsage{1, 2, 3}) == Cache::Change::kChanged);
  CHECK(*cache.SetNodeUsage("n1", NodeUsage{1, 2, 3}) == Cache::Change::kUnchanged);
  // A new version of the Node object keeps the load (it is not the object's).
  json node = Node("n1", "8", "8Gi");
  REQUIRE(cache.Upsert(node).ok());
  CHECK(cache.FindNode("n1")->usage == NodeUsage{1, 2, 3});
}
