// The network-topology-aware plugin's numbers, ported from Volcano v1.15.1
// pkg/scheduler/plugins/network-topology-aware/network_topology_aware_test.go.
// Each TEST_CASE names the Go test and its case. Scores are Volcano's
// (x100 x weight), compared within the Go tests' eps (0.1).
//
// How the Go tests' fixtures map here:
//  - HyperNodes are HyperNode objects (Volcano's wire format); the session
//    adds the cluster top HyperNode above them, as Volcano's openSession does
//    (the Go tests' tier numbers include it: 3 tiers + top = 4).
//  - The Go tests' parseTask sets task.JobAllocatedHyperNode from the
//    PodGroup's annotation; volcanic's equivalent is
//    SessionTopology::SetPlacing (the allocate action sets it).
//  - Gradients: a TopologyUnit with limit / allocated / min_resource and
//    Session::HyperNodeGradient, which applies what Volcano's registered
//    HyperNodeGradientFor{Job,SubJob}Fn applies (reverseAndCap... for evict).
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "topology_helpers.h"
#include "volcanic/framework/session.h"

using namespace volcanic;
using namespace volcanic::testing;

// ---------------------------------------------------------------------------
// TestBatchNodeOrderFn: every Ready node scored for the job's Pending task,
// with only EnabledNodeOrder set (the other flags off).

namespace {

// s3: 2 CPU 4G, s4: 4 CPU 4G, s5: 2 CPU 8G, s6: 4 CPU 8G, each with `foo`
// example.com/foo when given (s3, s4: foo_small; s5, s6: foo_large).
json BatchNodes(const std::string& foo_small = "", const std::string& foo_large = "") {
  json out = json::array();
  auto add = [&](const std::string& leaf, const std::string& cpu, const std::string& mem, const std::string& foo) {
    json extra = foo.empty() ? json::object() : json{{"example.com/foo", foo}};
    for (const char* n : {"-n1", "-n2"}) out.push_back(NodeWith(leaf + n, cpu, mem, extra));
  };
  add("s3", "2", "4G", foo_small);
  add("s4", "4", "4G", foo_small);
  add("s5", "2", "8G", foo_large);
  add("s6", "4", "8G", foo_large);
  return out;
}

const char* const kAllNodes[] = {"s3-n1", "s3-n2", "s4-n1", "s4-n2", "s5-n1", "s5-n2", "s6-n1", "s6-n2"};

std::map<std::string, double> BatchScores(const json& objects, const json& arguments, const std::string& pending,
                                          const std::string& allocated = "") {
  Cache c;
  Load(c, objects);
  SchedulerConf conf = Conf(NtaConf(arguments, {{"enableNodeOrder", true},
                                                {"enabledHyperNodeOrder", false},
                                                {"enabledHyperNodeGradient", false}}));
  Session ssn(c, conf, {});
  REQUIRE(ssn.Open().ok());
  TaskInfo* task = c.FindTask(pending);
  REQUIRE(task != nullptr);
  if (!allocated.empty()) ssn.topology().SetPlacing(task, FindHyperNode(ssn, allocated));
  return ScoreNodes(ssn, *task, std::vector<std::string>(std::begin(kAllNodes), std::end(kAllNodes)));
}

const json kCustomArgs = {{"weight", 10},
                          {"hypernode.binpack.cpu", 1},
                          {"hypernode.binpack.memory", 4},
                          {"hypernode.binpack.resources", "nvidia.com/gpu, example.com/foo"},
                          {"hypernode.binpack.resources.nvidia.com/gpu", 2},
                          {"hypernode.binpack.resources.example.com/foo", 3},
                          {"hypernode.binpack.normal-pod.enable", true},
                          {"hypernode.binpack.normal-pod.fading", 0}};

}  // namespace

TEST_CASE(
    "TestBatchNodeOrderFn: score empty nodes for single task with no network topology and no hypernode-level "
    "binpacking",
    "[network-topology]") {
  // Volcano answers an empty map; volcanic adds nothing to the scores.
  auto got = BatchScores(Concat({BatchNodes(), ThreeTierHyperNodes(),
                                 json::array({PodGroup("ns1", "pg1", "q1", 1, "Inqueue"),
                                              PodOf("ns1", "p1", "", "Pending", "2", "4G", "pg1"), Queue("q1")})}),
                         {{"hypernode.binpack.normal-pod.enable", false}}, "ns1/p1");
  for (const auto& [node, score] : got) {
    INFO(node);
    CHECK(score == 0.0);
  }
}

TEST_CASE("TestBatchNodeOrderFn: score empty nodes for single task with no network topology and default plugin arguments",
          "[network-topology]") {
  auto got = BatchScores(Concat({BatchNodes(), ThreeTierHyperNodes(),
                                 json::array({PodGroup("ns1", "pg1", "q1", 1, "Inqueue"),
                                              PodOf("ns1", "p1", "", "Pending", "2", "4G", "pg1"), Queue("q1")})}),
                         json::object(), "ns1/p1");
  CheckScores(got, {{"s3-n1", 25.8}, {"s3-n2", 25.8}, {"s4-n1", 21.6}, {"s4-n2", 21.6},
                    {"s5-n1", 19.9}, {"s5-n2", 19.9}, {"s6-n1", 15.7}, {"s6-n2", 15.7}});
}

TEST_CASE(
    "TestBatchNodeOrderFn: score empty nodes for single task with no network topology and customized plugin arguments",
    "[network-topology]") {
  auto got = BatchScores(
      Concat({BatchNodes("8", "16"), ThreeTierHyperNodes(),
              json::array({PodGroup("ns1", "pg1", "q1", 1, "Inqueue"),
                           PodOf("ns1", "p1", "", "Pending", "2", "4G", "pg1", json::object(), {{"example.com/foo", "8"}}),
                           Queue("q1")})}),
      kCustomArgs, "ns1/p1");
  CheckScores(got, {{"s3-n1", 500.0}, {"s3-n2", 500.0}, {"s4-n1", 468.75}, {"s4-n2", 468.75},
                    {"s5-n1", 281.3}, {"s5-n2", 281.3}, {"s6-n1", 250.0}, {"s6-n2", 250.0}});
}

TEST_CASE(
    "TestBatchNodeOrderFn: score non-empty nodes for single task with no network topology and customized plugin "
    "arguments",
    "[network-topology]") {
  json foo8 = {{"example.com/foo", "8"}};
  auto got = BatchScores(
      Concat({BatchNodes("8", "16"), ThreeTierHyperNodes(),
              json::array({PodGroup("ns1", "pg1", "q1", 1, "Inqueue"),
                           PodOf("ns1", "p1", "", "Pending", "2", "4G", "pg1", json::object(), foo8),
                           PodOf("ns1", "p2", "s3-n1", "Running", "2", "4G", "pg1", json::object(), foo8),
                           PodOf("ns1", "p3", "s3-n2", "Running", "2", "4G", "pg1", json::object(), foo8),
                           Queue("q1")})}),
      kCustomArgs, "ns1/p1");
  CheckScores(got, {{"s3-n1", 0.0}, {"s3-n2", 0.0}, {"s4-n1", 468.8}, {"s4-n2", 468.8},
                    {"s5-n1", 281.3}, {"s5-n2", 281.3}, {"s6-n1", 250.0}, {"s6-n2", 250.0}});
}

TEST_CASE("TestBatchNodeOrderFn: score nodes for tasks with network topology", "[network-topology]") {
  json pg = PodGroupWithTopology("ns1", "pg1", "q1", 2, "hard", 2);
  pg["spec"]["subGroupPolicy"] = json::array({SubGroupPolicyJson("task1", {"volcano.sh/task-spec"}, "hard", 2)});
  auto got = BatchScores(
      Concat({BatchNodes(), ThreeTierHyperNodes(),
              json::array({pg, PodOf("ns1", "p1", "", "Pending", "2", "4G", "pg1", Labelled("worker")),
                           PodOf("ns1", "p2", "s4-n1", "Running", "2", "4G", "pg1", Labelled("worker")), Queue("q1")})}),
      json::object(), "ns1/p1", "s1");
  CheckScores(got, {{"s3-n1", 66.7}, {"s3-n2", 66.7}, {"s4-n1", 116.7}, {"s4-n2", 116.7},
                    {"s5-n1", 33.3}, {"s5-n2", 33.3}, {"s6-n1", 33.3}, {"s6-n2", 33.3}});
}

// ---------------------------------------------------------------------------
// TestHyperNodeOrderFn: the sub-job "ns1/pg1/task1-worker" (both pods) scored
// on every HyperNode, the cluster top included.

namespace {

std::map<std::string, double> HyperNodeOrderScores(const json& objects, const json& arguments) {
  Cache c;
  Load(c, objects);
  SchedulerConf conf = Conf(NtaConf(arguments, {{"enabledHyperNodeOrder", true},
                                                {"enableNodeOrder", false},
                                                {"enabledHyperNodeGradient", false}}));
  Session ssn(c, conf, {});
  REQUIRE(ssn.Open().ok());
  const JobInfo* job = c.FindTask("ns1/p1")->job;
  REQUIRE(job != nullptr);
  const TopologyUnit* sub = nullptr;
  std::string ids;
  for (const TopologyUnit& g : ssn.topology().GangsOf(*job).gangs) {
    ids += " " + g.id + "(" + std::to_string(g.tasks.size()) + ")";
    // Volcano's SubJobID: "<ns>/<name>/<policy>-<values>".
    if (g.group == "task1" && g.id == "ns1/pg1/task1-worker") sub = &g;
  }
  INFO("gangs:" << ids);
  REQUIRE(sub != nullptr);
  REQUIRE(sub->tasks.size() == 2);
  std::vector<std::string> names = {"s0", "s1", "s2", "s3", "s4", "s5", "s6", HyperNodeTree::kTopName};
  std::vector<int> hns;
  for (const auto& n : names) hns.push_back(FindHyperNode(ssn, n));
  std::vector<double> scores = ssn.HyperNodeScores(*sub, hns);
  std::map<std::string, double> out;
  for (size_t i = 0; i < names.size(); ++i) out[names[i]] = scores[i];
  return out;
}

json SubJobPodGroup() {
  json pg = PodGroupWithTopology("ns1", "pg1", "q1", 2, "hard", 2);
  pg["spec"]["subGroupPolicy"] = json::array({SubGroupPolicyJson("task1", {"volcano.sh/task-spec"}, "", 0)});
  return pg;
}

}  // namespace

TEST_CASE("TestHyperNodeOrderFn: score hypernodes for a subjob with default plugin arguments", "[network-topology]") {
  auto got = HyperNodeOrderScores(
      Concat({BatchNodes(), ThreeTierHyperNodes(),
              json::array({SubJobPodGroup(), PodOf("ns1", "p1", "", "Pending", "4", "4G", "pg1", Labelled("worker")),
                           PodOf("ns1", "p2", "", "Pending", "4", "4G", "pg1", Labelled("worker")), Queue("q1")})}),
      json::object());
  CheckScores(got, {{"s0", 25.0}, {"s1", 58.3}, {"s2", 45.8}, {"s3", 0.0}, {"s4", 100.0}, {"s5", 0.0}, {"s6", 75.0},
                    {HyperNodeTree::kTopName, 25.0}});
}

TEST_CASE("TestHyperNodeOrderFn: score hypernodes for a subjob with customized plugin arguments",
          "[network-topology]") {
  // Each leaf's n1 has example.com/foo (8 on s3, s4; 16 on s5, s6), its n2 none ("0").
  json nodes = json::array();
  auto add = [&](const std::string& leaf, const std::string& cpu, const std::string& mem, const std::string& foo) {
    nodes.push_back(NodeWith(leaf + "-n1", cpu, mem, {{"example.com/foo", foo}}));
    nodes.push_back(NodeWith(leaf + "-n2", cpu, mem, {{"example.com/foo", "0"}}));
  };
  add("s3", "2", "4G", "8");
  add("s4", "4", "4G", "8");
  add("s5", "2", "8G", "16");
  add("s6", "4", "8G", "16");
  json foo8 = {{"example.com/foo", "8"}};
  json args = {{"weight", 10},
               {"hypernode.binpack.cpu", 3},
               {"hypernode.binpack.memory", 4},
               {"hypernode.binpack.resources", "nvidia.com/gpu, example.com/foo"},
               {"hypernode.binpack.resources.nvidia.com/gpu", 2},
               {"hypernode.binpack.resources.example.com/foo", 3},
               {"hypernode.binpack.normal-pod.enable", true},
               {"hypernode.binpack.normal-pod.fading", 0}};
  auto got = HyperNodeOrderScores(
      Concat({nodes, ThreeTierHyperNodes(),
              json::array({SubJobPodGroup(),
                           PodOf("ns1", "p1", "", "Pending", "4", "4G", "pg1", Labelled("worker"), foo8),
                           PodOf("ns1", "p2", "", "Pending", "4", "4G", "pg1", Labelled("worker"), foo8),
                           Queue("q1")})}),
      args);
  CheckScores(got, {{"s0", 266.7}, {"s1", 700.0}, {"s2", 450.0}, {"s3", 0.0}, {"s4", 0.0}, {"s5", 0.0}, {"s6", 800.0},
                    {HyperNodeTree::kTopName, 266.7}});
}

// ---------------------------------------------------------------------------
// TestHyperNodeGradientPreFiltering: 1000 nodes (4 CPU, 8Gi), 100 tier-1
// HyperNodes hn-1-<i> of 10 nodes each under hn-2-0 (tier 2); whether hn-1-0
// survives the resource pre-filter given its idle and future idle.
//
// The Go test writes hn-1-0's idle and futureIdle into the plugin's cache;
// here they come from pods on its nodes (1 CPU + 2Gi each): `used` units in
// all, `releasing` of them Releasing (deletionTimestamp), so idle = 40 - used
// and futureIdle = idle + releasing. A futureIdle below idle needs Pipelined
// resources at session open, which a volcanic cache cannot hold; those two
// cases ("idle sufficient, futureIdle insufficient") use futureIdle = idle,
// which leaves their decision (idle suffices) as Volcano's.
//
// The cap on evict gradients (hypernode.gradient.evict.max-hypernodes) is
// raised to 1000: the Go test calls hyperNodeGradientFn directly, before
// reverseAndCapEvictionGradients, which Session::HyperNodeGradient applies
// (as Volcano's registered HyperNodeGradientForJobFn does). For the same
// reason evict gradients are checked in descending tier order.

namespace {

struct PreFilterCase {
  SearchPurpose purpose;
  int32_t highest_tier;
  int min_cpu;        // cores
  int min_mem_gi;
  int used_cpu;       // units on hn-1-0: used = 40 - idle
  int releasing_cpu;  // of which releasing: futureIdle - idle
  bool expect_selected;
};

const json& PreFilterTopology() {
  static const json all = [] {
    json out = json::array();
    for (int i = 0; i < 1000; ++i) out.push_back(Node("node-" + std::to_string(i), "4", "8Gi"));
    json tier1 = json::array();
    for (int i = 0; i < 100; ++i) {
      std::string hn = "hn-1-" + std::to_string(i);
      json members = json::array();
      for (int j = 0; j < 10; ++j) members.push_back(MemberNode("node-" + std::to_string(i * 10 + j)));
      out.push_back(HyperNodeObject(hn, 1, members));
      tier1.push_back(MemberHyperNode(hn));
    }
    out.push_back(HyperNodeObject("hn-2-0", 2, tier1));
    out.push_back(Queue("q1"));
    out.push_back(PodGroup("ns", "filler", "q1", 1, "Running"));
    return out;
  }();
  return all;
}

void RunPreFilterCase(const PreFilterCase& tc) {
  json objects = PreFilterTopology();
  for (int i = 0; i < tc.used_cpu; ++i) {
    json p = PodOf("ns", "f" + std::to_string(i), "node-" + std::to_string(i % 10), "Running", "1", "2Gi", "filler");
    if (i < tc.releasing_cpu) p["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z";
    objects.push_back(p);
  }
  Cache c;
  Load(c, objects);
  SchedulerConf conf = Conf(NtaConf({{"hypernode.gradient.evict.max-hypernodes", 1000}}));
  Session ssn(c, conf, {});
  REQUIRE(ssn.Open().ok());

  const int hn_1_0 = FindHyperNode(ssn, "hn-1-0");
  // The fixture is what the Go test writes into the cache.
  Resource idle, future_idle;
  for (int n : ssn.topology().tree().at(hn_1_0).nodes) {
    idle += ssn.nodes()[n]->idle;
    future_idle += ssn.nodes()[n]->FutureIdle();
  }
  REQUIRE(idle.Get(kCpu) == (40 - tc.used_cpu) * 1000);
  REQUIRE(future_idle.Get(kCpu) == (40 - tc.used_cpu + tc.releasing_cpu) * 1000);
  REQUIRE(idle.Get(kMemory) == (int64_t{80 - 2 * tc.used_cpu} << 30));

  TopologyUnit u;
  u.limit = {true, tc.highest_tier};
  u.allocated = HyperNodeTree::kNone;
  u.min_resource.Set(kCpu, int64_t{tc.min_cpu} * 1000);
  u.min_resource.Set(kMemory, int64_t{tc.min_mem_gi} << 30);
  HyperNodeGradients got = ssn.HyperNodeGradient(u, FindHyperNode(ssn, "hn-2-0"), tc.purpose);

  bool found = false;
  for (const auto& tier : got)
    for (int hn : tier) found = found || hn == hn_1_0;
  CHECK(found == tc.expect_selected);

  const auto& tree = ssn.topology().tree();
  for (size_t i = 0; i + 1 < got.size(); ++i) {
    if (got[i].empty() || got[i + 1].empty()) continue;
    if (tc.purpose == SearchPurpose::kEvict) {
      CHECK(tree.at(got[i][0]).tier >= tree.at(got[i + 1][0]).tier);
    } else {
      CHECK(tree.at(got[i][0]).tier <= tree.at(got[i + 1][0]).tier);
    }
  }
}

}  // namespace

TEST_CASE("TestHyperNodeGradientPreFiltering: Job - idle sufficient, futureIdle sufficient", "[network-topology]") {
  RunPreFilterCase({SearchPurpose::kAllocate, 2, 20, 40, 10, 5, true});  // idle 30/60Gi, futureIdle 35/70Gi
}
TEST_CASE("TestHyperNodeGradientPreFiltering: Job - idle sufficient, futureIdle insufficient", "[network-topology]") {
  RunPreFilterCase({SearchPurpose::kAllocate, 2, 20, 40, 10, 0, true});  // idle 30/60Gi (futureIdle: see above)
}
TEST_CASE("TestHyperNodeGradientPreFiltering: Job - idle insufficient, futureIdle sufficient", "[network-topology]") {
  RunPreFilterCase({SearchPurpose::kAllocate, 2, 20, 40, 25, 15, true});  // idle 15/30Gi, futureIdle 30/60Gi
}
TEST_CASE("TestHyperNodeGradientPreFiltering: Job - idle insufficient, futureIdle insufficient", "[network-topology]") {
  RunPreFilterCase({SearchPurpose::kAllocate, 2, 20, 40, 25, 0, false});  // idle 15/30Gi, futureIdle 15/30Gi
}
TEST_CASE("TestHyperNodeGradientPreFiltering: SubJob - idle sufficient, futureIdle sufficient", "[network-topology]") {
  RunPreFilterCase({SearchPurpose::kAllocate, 1, 10, 20, 20, 5, true});  // idle 20/40Gi, futureIdle 25/50Gi
}
TEST_CASE("TestHyperNodeGradientPreFiltering: SubJob - idle sufficient, futureIdle insufficient",
          "[network-topology]") {
  RunPreFilterCase({SearchPurpose::kAllocate, 1, 10, 20, 20, 0, true});  // idle 20/40Gi (futureIdle: see above)
}
TEST_CASE("TestHyperNodeGradientPreFiltering: SubJob - idle insufficient, futureIdle sufficient",
          "[network-topology]") {
  RunPreFilterCase({SearchPurpose::kAllocate, 1, 10, 20, 35, 15, true});  // idle 5/10Gi, futureIdle 20/40Gi
}
TEST_CASE("TestHyperNodeGradientPreFiltering: SubJob - idle insufficient, futureIdle insufficient",
          "[network-topology]") {
  RunPreFilterCase({SearchPurpose::kAllocate, 1, 10, 20, 35, 0, false});  // idle 5/10Gi, futureIdle 5/10Gi
}
TEST_CASE("TestHyperNodeGradientPreFiltering: Evict purpose - idle insufficient, futureIdle insufficient",
          "[network-topology]") {
  RunPreFilterCase({SearchPurpose::kEvict, 2, 20, 40, 25, 0, true});  // allocatable 40/80Gi suffices
}
TEST_CASE("TestHyperNodeGradientPreFiltering: Evict purpose - allocatable insufficient", "[network-topology]") {
  RunPreFilterCase({SearchPurpose::kEvict, 2, 50, 100, 25, 0, false});  // 50/100Gi > allocatable 40/80Gi
}

// ---------------------------------------------------------------------------
// TestReverseAndCapEvictionGradients: the Go test feeds [[a b] [c d]] (tier
// 1, tier 2) to reverseAndCapEvictionGradients. Here that gradient is what
// the plugin builds under r (tier 3, above the limit of 2): c over a, d over
// b; Session::HyperNodeGradient with kEvict then reverses and caps it.

namespace {

std::vector<std::vector<std::string>> EvictGradientNames(const json& arguments) {
  Cache c;
  Load(c, json::array({Node("n-a", "4", "8Gi"), Node("n-b", "4", "8Gi"),
                       HyperNodeObject("a", 1, json::array({MemberNode("n-a")})),
                       HyperNodeObject("b", 1, json::array({MemberNode("n-b")})),
                       HyperNodeObject("c", 2, json::array({MemberHyperNode("a")})),
                       HyperNodeObject("d", 2, json::array({MemberHyperNode("b")})),
                       HyperNodeObject("r", 3, json::array({MemberHyperNode("c"), MemberHyperNode("d")}))}));
  SchedulerConf conf = Conf(NtaConf(arguments));
  Session ssn(c, conf, {});
  REQUIRE(ssn.Open().ok());
  TopologyUnit u;
  u.limit = {true, 2};
  std::vector<std::vector<std::string>> out;
  // The gradient before the reversal, as the Go test's input.
  for (const auto& tier : ssn.HyperNodeGradient(u, FindHyperNode(ssn, "r"), SearchPurpose::kAllocate)) {
    out.emplace_back();
    for (int hn : tier) out.back().push_back(ssn.topology().tree().at(hn).name);
  }
  REQUIRE(out == std::vector<std::vector<std::string>>{{"a", "b"}, {"c", "d"}});
  out.clear();
  for (const auto& tier : ssn.HyperNodeGradient(u, FindHyperNode(ssn, "r"), SearchPurpose::kEvict)) {
    out.emplace_back();
    for (int hn : tier) out.back().push_back(ssn.topology().tree().at(hn).name);
  }
  return out;
}

}  // namespace

TEST_CASE("TestReverseAndCapEvictionGradients: maxHyperNodesForEviction 3", "[network-topology]") {
  auto got = EvictGradientNames({{"hypernode.gradient.evict.max-hypernodes", 3}});
  REQUIRE(got == std::vector<std::vector<std::string>>{{"c", "d"}, {"b"}});
}

TEST_CASE("TestReverseAndCapEvictionGradients: maxHyperNodesForEviction 0", "[network-topology]") {
  // The Go test sets the field to 0 directly and gets the input back
  // unchanged. Through arguments, getMaxHyperNodesForEviction resets a
  // non-positive value to DefaultEvictMaxHyperNodes (8), which keeps all
  // four HyperNodes, widest tier first.
  auto got = EvictGradientNames({{"hypernode.gradient.evict.max-hypernodes", 0}});
  REQUIRE(got == std::vector<std::vector<std::string>>{{"c", "d"}, {"a", "b"}});
}

// ---------------------------------------------------------------------------
// TestHyperNodeGradientForSubJobFn_NoSubJobPolicyRespectsHardTopology: a
// pending 20-CPU task of a job with hard topology at tier 1 and no
// subGroupPolicy; the zones (tier 1) have 16 CPUs each, so evicting finds no
// HyperNode and must not fall back to the root.

TEST_CASE("TestHyperNodeGradientForSubJobFn_NoSubJobPolicyRespectsHardTopology", "[network-topology]") {
  Cache c;
  Load(c, json::array({Node("node-a-1", "8", "8Gi"), Node("node-a-2", "8", "8Gi"), Node("node-d-1", "8", "8Gi"),
                       Node("node-d-2", "8", "8Gi"),
                       HyperNodeObject("zone-a", 1, json::array({MemberNode("node-a-1"), MemberNode("node-a-2")})),
                       HyperNodeObject("zone-d", 1, json::array({MemberNode("node-d-1"), MemberNode("node-d-2")})),
                       HyperNodeObject("region", 2, json::array({MemberHyperNode("zone-a"), MemberHyperNode("zone-d")})),
                       Queue("q1"), PodGroupWithTopology("ns", "job-hard-no-subjob-policy", "q1", 1, "hard", 1),
                       PodOf("ns", "pending-task", "", "Pending", "20", "0", "job-hard-no-subjob-policy")}));
  SchedulerConf conf = Conf(NtaConf(json::object(), {{"enabledHyperNodeGradient", true}}));
  Session ssn(c, conf, {});
  REQUIRE(ssn.Open().ok());
  const JobInfo* job = c.FindTask("ns/pending-task")->job;
  REQUIRE(job != nullptr);
  JobGangs& gangs = ssn.topology().GangsOf(*job);
  REQUIRE(gangs.gangs.size() == 1);
  const TopologyUnit& sub = gangs.gangs[0];
  REQUIRE(sub.limit.hard);
  REQUIRE(sub.limit.highest_tier == 1);
  REQUIRE(ssn.topology().tree().at(ssn.topology().tree().top()).tier == 3);
  auto got = ssn.HyperNodeGradient(sub, ssn.topology().tree().top(), SearchPurpose::kEvict);
  CHECK(got.empty());
}
