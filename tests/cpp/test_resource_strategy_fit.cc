// The resource-strategy-fit plugin's numbers, ported from Volcano v1.15.1
// pkg/scheduler/plugins/resource-strategy-fit/{resource_strategy_fit,sra,
// proportional}_test.go; each TEST_CASE names the Go test and its cases.
// Allocation and the proportional predicate in whole sessions are scenarios
// (tests/scenarios/resource-strategy-fit). Scores within the Go tests' eps.
//
// Where the Go tests build TaskInfo / NodeInfo by hand, so do these (a Go
// Resource without a `pods` entry is a volcanic one without kPods); where they
// open a session (TestResourceStrategyFitPlugin, TestNode), these do too.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <string>

#include "topology_helpers.h"
#include "volcanic/api/errors.h"
#include "volcanic/plugins/resource_strategy_fit.h"

using namespace volcanic;
using namespace volcanic::testing;
using namespace volcanic::resource_strategy_fit;

namespace {

constexpr double kScoreEps = 1e-6;  // the Go tests' 1e-8, on their 8-digit expectations
constexpr Scoring kLeast = Scoring::kLeastAllocated, kMost = Scoring::kMostAllocated;

Args Parse(const json& arguments) {
  auto parsed = ParseArgs(Arguments(arguments, "plugin resource-strategy-fit"));
  INFO(parsed.status().ToString());
  REQUIRE(parsed.ok());
  return *parsed;
}

// buildTaskInfo / buildNodeInfo of resource_strategy_fit_test.go.
TaskInfo Task(int64_t milli_cpu, int64_t memory, Labels annotations = {}) {
  TaskInfo t;
  t.resreq.Set(kCpu, milli_cpu);
  t.resreq.Set(kMemory, memory);
  t.annotations = std::move(annotations);
  return t;
}

NodeInfo NodeUsed(int64_t used_cpu, int64_t used_mem, int64_t alloc_cpu, int64_t alloc_mem) {
  NodeInfo n;
  n.used.Set(kCpu, used_cpu);
  n.used.Set(kMemory, used_mem);
  n.allocatable.Set(kCpu, alloc_cpu);
  n.allocatable.Set(kMemory, alloc_mem);
  return n;
}

StrategyArgs Strategy(int64_t weight, ScoringTable resources) { return {weight, std::move(resources)}; }

double Score(const TaskInfo& t, const NodeInfo& n, const StrategyArgs& args) {
  auto pod = ReadPodScoring(t);
  return StrategyScore(t, n, args, ResolveByResourceId(args.resources, ResourceNames::Width()), pod ? &*pod : nullptr);
}

// Every (pod, node) score of one session with the plugin alone in a tier.
void CheckSessionScores(const json& objects, const json& arguments,
                        const std::map<std::string, std::map<std::string, double>>& expected) {
  json plugin = {{"name", "resource-strategy-fit"}, {"enableNodeOrder", true}, {"arguments", arguments}};
  json conf = {{"actions", "allocate"}, {"tiers", json::array({{{"plugins", json::array({plugin})}}})}};
  Cache c;
  Load(c, objects);
  SchedulerConf sc = Conf(conf.dump());
  Session ssn(c, sc, {});
  REQUIRE(ssn.Open().ok());
  for (const auto& [task_key, want] : expected) {
    TaskInfo* task = c.FindTask(task_key);
    REQUIRE(task != nullptr);
    std::vector<std::string> names;
    for (const auto& [node, score] : want) names.push_back(node);
    auto got = ScoreNodes(ssn, *task, names);
    for (const auto& [node, score] : want) {
      INFO(task_key << " on " << node << ": Volcano expects " << score << ", volcanic gives " << got.at(node));
      CHECK(std::abs(got.at(node) - score) <= kScoreEps);
    }
  }
}

}  // namespace

TEST_CASE("resource-strategy-fit: Test_calculateWeight", "[resource-strategy-fit]") {
  SECTION("test1: weight and both resources given") {
    Args a = Parse({{"resourceStrategyFitWeight", 10},
                    {"resources",
                     {{"cpu", {{"type", "MostAllocated"}, {"weight", 1}}},
                      {"memory", {{"type", "LeastAllocated"}, {"weight", 2}}}}}});
    CHECK(a.strategy.weight == 10);
    CHECK(a.strategy.resources == ScoringTable{{"cpu", {kMost, 1}}, {"memory", {kLeast, 2}}});
  }
  SECTION("test2: the weight defaults to 10") {
    Args a = Parse({{"resources",
                     {{"cpu", {{"type", "MostAllocated"}, {"weight", 1}}},
                      {"memory", {{"type", "LeastAllocated"}, {"weight", 2}}}}}});
    CHECK(a.strategy.weight == 10);
    CHECK(a.strategy.resources == ScoringTable{{"cpu", {kMost, 1}}, {"memory", {kLeast, 2}}});
  }
  SECTION("test3: resources default to cpu and memory, LeastAllocated, weight 1") {
    Args a = Parse({{"resourceStrategyFitWeight", 10}});
    CHECK(a.strategy.resources == ScoringTable{{"cpu", {kLeast, 1}}, {"memory", {kLeast, 1}}});
    CHECK_FALSE(a.proportional);
    CHECK(a.sra.weight == 0);
  }
  // test4..test7 pass patterns Volcano drops with a warning (and a misspelt
  // weight it ignores): volcanic refuses both (config-*.yaml scenarios).
  // What Volcano keeps of them is accepted as it keeps it.
  SECTION("test5/test7: the valid prefix patterns are kept") {
    Args a = Parse({{"resources",
                     {{"nvidia.com/gpu/*", {{"type", "MostAllocated"}, {"weight", 3}}},
                      {"example.com/foo/*", {{"type", "LeastAllocated"}, {"weight", 2}}}}}});
    CHECK(a.strategy.weight == 10);
    CHECK(a.strategy.resources == ScoringTable{{"nvidia.com/gpu/*", {kMost, 3}}, {"example.com/foo/*", {kLeast, 2}}});
  }
  SECTION("test4..test7: the patterns Volcano drops are refused") {
    for (const char* bad : {"*", "cloudml.gpu**", "cloudml.*.gpu", "*.com/gpu", "*test*resource*"}) {
      INFO(bad);
      CHECK_FALSE(IsValidPattern(bad));
      auto parsed = ParseArgs(Arguments({{"resources", {{bad, {{"type", "MostAllocated"}}}}}}, "p"));
      CHECK(IsConfigError(parsed.status()));
    }
    CHECK(IsConfigError(ParseArgs(Arguments({{"ResourceStrategyFitPlusWeight", 10}}, "p")).status()));
  }
  SECTION("a negative weight is 10, a non-positive resource weight 1 (calculateWeight)") {
    Args a = Parse({{"resourceStrategyFitWeight", -1}, {"resources", {{"cpu", {{"weight", 0}}}}}});
    CHECK(a.strategy.weight == 10);
    CHECK(a.strategy.resources == ScoringTable{{"cpu", {kLeast, 1}}});
  }
}

TEST_CASE("resource-strategy-fit: TestScore", "[resource-strategy-fit]") {
  auto least = [](int64_t w, int64_t cpu, int64_t mem) {
    return Strategy(w, {{"cpu", {kLeast, cpu}}, {"memory", {kLeast, mem}}});
  };
  auto most = [](int64_t w, int64_t cpu, int64_t mem) {
    return Strategy(w, {{"cpu", {kMost, cpu}}, {"memory", {kMost, mem}}});
  };
  auto mixed = [](int64_t w, Scoring cpu, int64_t cw, Scoring mem, int64_t mw) {
    return Strategy(w, {{"cpu", {cpu, cw}}, {"memory", {mem, mw}}});
  };
  const TaskInfo t = Task(100, 100);
  const NodeInfo half = NodeUsed(200, 200, 500, 500), small = NodeUsed(200, 200, 400, 400);
  struct Case {
    const char* name;
    TaskInfo task;
    NodeInfo node;
    StrategyArgs args;
    double want;
  };
  const Labels least_pod = {{kScoringTypeAnnotation, "LeastAllocated"}};
  auto with = [](Labels a, const char* weights) {
    a[kScoringWeightAnnotation] = weights;
    return a;
  };
  const std::vector<Case> cases = {
      {"test1", t, half, least(10, 1, 1), 400},
      {"test2", t, small, least(10, 1, 1), 250},
      {"test3", t, half, most(10, 1, 1), 600},
      {"test4", t, small, most(10, 1, 1), 750},
      {"test5", t, half, mixed(10, kLeast, 2, kMost, 1), 466.66666667},
      {"test6", t, half, mixed(10, kLeast, 1, kMost, 2), 533.33333333},
      {"test7", Task(0, 100), half, mixed(10, kLeast, 1, kMost, 2), 600},
      {"test8", t, NodeUsed(200, 200, 0, 400), mixed(10, kLeast, 1, kMost, 2), 500},
      {"test9", t, half, Strategy(10, {{"memory", {kMost, 2}}}), 600},
      {"pod-level-scoring-least-allocated", Task(100, 100, with(least_pod, R"({"cpu": 2, "memory": 1})")), half,
       least(10, 1, 1), 400},
      {"pod-level-scoring-most-allocated",
       Task(100, 100, with({{kScoringTypeAnnotation, "MostAllocated"}}, R"({"cpu": 1, "memory": 2})")), half,
       least(10, 1, 1), 600},
      {"pod-level-scoring-invalid-json", Task(100, 100, with(least_pod, "invalid-json")), half, least(10, 1, 1), 0},
      {"pod-level-scoring-missing-resource-weight", Task(100, 100, with(least_pod, R"({"cpu": 2})")), half,
       least(10, 1, 1), 400},
      {"zero-resources-requested", Task(0, 0), half, least(10, 1, 1), 0},
      {"node-fully-allocated", t, NodeUsed(500, 500, 500, 500), least(10, 1, 1), 0},
      {"mixed-scoring-strategies", t, half, mixed(10, kLeast, 3, kMost, 1), 450},
      {"high-weight-scenario", t, half, least(20, 5, 5), 800},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    CHECK(std::abs(Score(c.task, c.node, c.args) - c.want) <= kScoreEps);
  }
  SECTION("a scoring-type annotation without weights scores 0") {
    CHECK(Score(Task(100, 100, least_pod), half, least(10, 1, 1)) == 0);
  }
}

TEST_CASE("resource-strategy-fit: Test_mostRequestedScore, Test_leastRequestedScore", "[resource-strategy-fit]") {
  // test1: nothing at all scores 0; test2: 1 more on a full node is an error.
  CHECK(MostAllocatedTerm(0, 0, 0, 0) == 0.0);
  CHECK_FALSE(MostAllocatedTerm(1, 2, 2, 1));
  CHECK(LeastAllocatedTerm(0, 0, 0, 0) == 0.0);
  CHECK_FALSE(LeastAllocatedTerm(1, 2, 2, 1));
}

TEST_CASE("resource-strategy-fit: Test_findResourceConfigWithPrefix", "[resource-strategy-fit]") {
  // exact_match_priority
  CHECK(FindScoring("nvidia.com/gpu", {{"nvidia.com/gpu", {kMost, 3}}, {"nvidia.com/*", {kLeast, 1}}}) ==
        ResourceScoring{kMost, 3});
  // longest_prefix_match
  CHECK(FindScoring("nvidia.com/gpu/v100", {{"nvidia.com/gpu/*", {kMost, 2}}, {"nvidia.com/*", {kLeast, 1}}}) ==
        ResourceScoring{kMost, 2});
  // no_match_found, empty_resources_map
  CHECK_FALSE(FindScoring("example.com/foo", {{"nvidia.com/gpu/*", {kMost, 2}}}));
  CHECK_FALSE(FindScoring("any.resource", {}));
  // multiple_valid_wildcards_longest_match
  CHECK(FindScoring("cloudml.gpu/tensorflow/v2", {{"cloudml.gpu/tensorflow/*", {kMost, 3}},
                                                  {"cloudml.gpu/*", {kLeast, 2}},
                                                  {"cloudml/*", {kMost, 1}}}) == ResourceScoring{kMost, 3});
}

TEST_CASE("resource-strategy-fit: TestResourceStrategyFitPlugin", "[resource-strategy-fit]") {
  json none = json::object();
  auto pod = [&](const char* name, const char* mem, json extra) {
    return PodOf("c1", name, "", "Pending", "1", mem, "pg1", none, std::move(extra));
  };
  json pg = PodGroup("c1", "pg1", "c1", 0, "Pending"), q = Queue("c1");
  SECTION("single job: gpu MostAllocated 1, foo LeastAllocated 1") {
    json objects = json::array({pod("p1", "1Gi", {{"example.com/foo", "2"}}), pod("p2", "1Gi", {{"example.com/foo", "3"}}),
                                pod("p3", "10Gi", {{"nvidia.com/gpu", "2"}}), pod("p4", "1Gi", {{"nvidia.com/gpu", "3"}}),
                                NodeWith("n1", "4", "4Gi", {{"nvidia.com/gpu", "10"}}),
                                NodeWith("n2", "4", "4Gi", {{"nvidia.com/gpu", "5"}}),
                                NodeWith("n3", "4", "4Gi", {{"example.com/foo", "10"}}),
                                NodeWith("n4", "4", "4Gi", {{"example.com/foo", "5"}}), pg, q});
    json args = {{"resourceStrategyFitWeight", 10},
                 {"resources",
                  {{"nvidia.com/gpu", {{"type", "MostAllocated"}, {"weight", 1}}},
                   {"example.com/foo", {{"type", "LeastAllocated"}, {"weight", 1}}}}}};
    CheckSessionScores(objects, args,
                       {{"c1/p1", {{"n1", 0}, {"n2", 0}, {"n3", 800}, {"n4", 600}}},
                        {"c1/p2", {{"n1", 0}, {"n2", 0}, {"n3", 700}, {"n4", 400}}},
                        {"c1/p3", {{"n1", 200}, {"n2", 400}, {"n3", 0}, {"n4", 0}}},
                        {"c1/p4", {{"n1", 300}, {"n2", 600}, {"n3", 0}, {"n4", 0}}}});
  }
  SECTION("single job: gpu MostAllocated 1, foo LeastAllocated 2, a pod asking for both") {
    json objects = json::array({pod("p5", "1Gi", {{"nvidia.com/gpu", "4"}, {"example.com/foo", "4"}}),
                                NodeWith("n5", "4", "4Gi", {{"nvidia.com/gpu", "10"}, {"example.com/foo", "5"}}),
                                NodeWith("n6", "4", "4Gi", {{"example.com/foo", "10"}}), pg, q});
    json args = {{"resourceStrategyFitWeight", 10},
                 {"resources",
                  {{"nvidia.com/gpu", {{"type", "MostAllocated"}, {"weight", 1}}},
                   {"example.com/foo", {{"type", "LeastAllocated"}, {"weight", 2}}}}}};
    CheckSessionScores(objects, args, {{"c1/p5", {{"n5", 266.66666666}, {"n6", 399.99999999}}}});
  }
}

TEST_CASE("resource-strategy-fit: sra TestArguments", "[resource-strategy-fit]") {
  Args a = Parse({{"sra",
                   {{"enable", true},
                    {"resources", "nvidia.com/t4, nvidia.com/a10"},
                    {"weight", 3},
                    {"resourceWeight", {{"nvidia.com/t4", 1}, {"nvidia.com/a10", 2}}}}},
                  {"proportional",
                   {{"enable", true},
                    {"resources", "nvidia.com/t4, nvidia.com/a10"},
                    {"resourceProportion",
                     {{"nvidia.com/t4.cpu", 3},
                      {"nvidia.com/t4.memory", 6},
                      {"nvidia.com/a10.cpu", 4},
                      {"nvidia.com/a10.memory", 8}}}}}});
  CHECK(a.sra.weight == 3);
  CHECK(a.sra.weight_sum == 3);
  REQUIRE(a.sra.resources.size() == 2);
  CHECK(a.sra.resources[0] == std::pair<ResourceId, int64_t>{ResourceNames::Find("nvidia.com/t4"), 1});
  CHECK(a.sra.resources[1] == std::pair<ResourceId, int64_t>{ResourceNames::Find("nvidia.com/a10"), 2});
  REQUIRE(a.proportional);
  REQUIRE(a.proportional->size() == 2);
  CHECK((*a.proportional)[0].name == "nvidia.com/t4");
  CHECK((*a.proportional)[0].cpu == 3);
  CHECK((*a.proportional)[0].memory == 6);
  CHECK((*a.proportional)[1].name == "nvidia.com/a10");
  CHECK((*a.proportional)[1].cpu == 4);
  CHECK((*a.proportional)[1].memory == 8);
}

TEST_CASE("resource-strategy-fit: sra TestNode", "[resource-strategy-fit]") {
  json none = json::object();
  const char* t4 = "nvidia.com/t4";
  const char* a10 = "nvidia.com/a10";
  json objects = json::array(
      {PodOf("c1", "p1", "", "Pending", "1", "1Gi", "pg1"), PodOf("c1", "p2", "", "Pending", "1.5", "0Gi", "pg1", none, {{t4, "2"}}),
       PodOf("c1", "p3", "", "Pending", "2", "4Gi", "pg1", none, {{a10, "2"}}),
       PodOf("c1", "p4", "", "Pending", "3", "4Gi", "pg1", none, {{t4, "1"}, {a10, "3"}}), Node("n1", "32", "64Gi"),
       NodeWith("n2", "8", "16Gi", {{t4, "16"}}), NodeWith("n3", "8", "16Gi", {{a10, "16"}}),
       NodeWith("n4", "8", "16Gi", {{t4, "8"}, {a10, "16"}}), PodGroup("c1", "pg1", "c1", 0, "Pending"), Queue("c1")});
  json t4_only_sra = {{"enable", true}, {"resources", t4}, {"weight", 5}, {"resourceWeight", {{t4, 2}}}};
  json strategy = {{"nvidia.com/t4", {{"type", "MostAllocated"}, {"weight", 3}}},
                   {"cpu", {{"type", "LeastAllocated"}, {"weight", 1}}}};
  // The strategy part of case3 and case4, which sra does not change for
  // pods p2..p4 (they ask for what some node lacks, or sra has weight 0).
  const std::map<std::string, std::map<std::string, double>> strategy_only = {
      {"c1/p2", {{"n1", 190.625}, {"n2", 237.5}, {"n3", 162.5}, {"n4", 312.5}}},
      {"c1/p4", {{"n1", 181.25}, {"n2", 162.5}, {"n3", 125}, {"n4", 200}}}};
  SECTION("case1: single job score result in multi-GPU resource") {
    json sra = {{"enable", true}, {"resources", "nvidia.com/t4, nvidia.com/a10"}, {"weight", 5},
                {"resourceWeight", {{t4, 2}, {a10, 3}}}};
    CheckSessionScores(objects, {{"resourceStrategyFitWeight", 0}, {"sra", sra}},
                       {{"c1/p1", {{"n1", 500}, {"n2", 300}, {"n3", 200}, {"n4", 0}}},
                        {"c1/p2", {{"n1", 0}, {"n2", 300}, {"n3", 0}, {"n4", 0}}},
                        {"c1/p3", {{"n1", 0}, {"n2", 0}, {"n3", 200}, {"n4", 0}}},
                        {"c1/p4", {{"n1", 0}, {"n2", 0}, {"n3", 0}, {"n4", 0}}}});
  }
  SECTION("case2: single job score result in single GPU resource") {
    CheckSessionScores(objects, {{"resourceStrategyFitWeight", 0}, {"sra", t4_only_sra}},
                       {{"c1/p1", {{"n1", 500}, {"n2", 0}, {"n3", 500}, {"n4", 0}}},
                        {"c1/p2", {{"n1", 0}, {"n2", 0}, {"n3", 0}, {"n4", 0}}},
                        {"c1/p3", {{"n1", 0}, {"n2", 0}, {"n3", 500}, {"n4", 0}}},
                        {"c1/p4", {{"n1", 0}, {"n2", 0}, {"n3", 0}, {"n4", 0}}}});
  }
  SECTION("case3: sra with weight 0 and resourceStrategyFit") {
    json sra = t4_only_sra;
    sra["weight"] = 0;
    auto want = strategy_only;
    want["c1/p1"] = {{"n1", 775}, {"n2", 700}, {"n3", 700}, {"n4", 700}};
    want["c1/p3"] = {{"n1", 750}, {"n2", 600}, {"n3", 600}, {"n4", 600}};
    CheckSessionScores(objects, {{"resourceStrategyFitWeight", 8}, {"resources", strategy}, {"sra", sra}}, want);
  }
  SECTION("case4: sra and resourceStrategyFit") {
    auto want = strategy_only;
    want["c1/p1"] = {{"n1", 1275}, {"n2", 700}, {"n3", 1200}, {"n4", 700}};
    want["c1/p3"] = {{"n1", 750}, {"n2", 600}, {"n3", 1100}, {"n4", 600}};
    CheckSessionScores(objects, {{"resourceStrategyFitWeight", 8}, {"resources", strategy}, {"sra", t4_only_sra}},
                       want);
  }
}

TEST_CASE("resource-strategy-fit: Test_checkNodeResourceIsProportional", "[resource-strategy-fit]") {
  const ResourceId gpu = ResourceNames::Intern("nvidia.com/gpu");
  const std::vector<Proportion> proportional = {{gpu, "nvidia.com/gpu", 4, 4}};
  // buildTask / buildNode: cpu in cores, memory in G (1e9), GPUs in milli-units.
  auto task = [&](int64_t cpu, int64_t mem_g, int64_t gpus) {
    TaskInfo t = Task(cpu * 1000, mem_g * 1000000000);
    t.resreq.Set(gpu, gpus * 1000);
    return t;
  };
  auto node = [&](int64_t cpu, int64_t mem_g, int64_t gpus) {
    NodeInfo n;
    n.idle.Set(kCpu, cpu * 1000);
    n.idle.Set(kMemory, mem_g * 1000000000);
    n.idle.Set(gpu, gpus * 1000);
    return n;
  };
  const TaskInfo t1 = task(4, 4, 0), t2 = task(10, 10, 0), t3 = task(10, 10, 1);
  const NodeInfo n1 = node(30, 30, 6), n2 = node(26, 26, 2);
  CHECK_FALSE(ProportionalMisfit(t1, n1, proportional));  // cpu_task_less_than_reserved_resource
  CHECK(ProportionalMisfit(t2, n1, proportional) ==       // cpu_task_greater_than_reserved_resource
        std::optional<std::string>("proportional of resource nvidia.com/gpu check failed"));
  CHECK_FALSE(ProportionalMisfit(t3, n1, proportional));  // gpu_task_no_proportional_check
  CHECK_FALSE(ProportionalMisfit(t2, n2, proportional));  // cpu_task_less_than_idle_resource
}
