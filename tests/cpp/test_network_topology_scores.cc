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

namespace {

// ---------------------------------------------------------------------------
// TestNetworkTopologyAwareNodeScore_Hard / _Soft: a gang pod's node scores
// (batchNodeOrderFnForNetworkAwarePods). The two Go tests are the same cases
// with mode "hard" and "soft" (highestTierAllowed 0 in both).

struct NodeScoreCase {
  json objects;                   // nodes, hypernodes, pods, the PodGroup and q1
  std::string pending;            // the Pending task parseTask picks
  std::string allocated;          // the PodGroup's JobAllocatedHyperNode ("" for none)
  int weight = 1;
  std::vector<std::string> score_nodes;
  std::map<std::string, double> expected;
};

void RunNodeScoreCase(const NodeScoreCase& tc) {
  Cache c;
  Load(c, tc.objects);
  SchedulerConf conf = Conf(NtaConf({{"weight", tc.weight}},
                                    {{"enabledHyperNodeOrder", true},
                                     {"enableNodeOrder", true},
                                     {"enabledHyperNodeGradient", true}}));
  Session ssn(c, conf, {});
  REQUIRE(ssn.Open().ok());
  TaskInfo* task = c.FindTask(tc.pending);
  REQUIRE(task != nullptr);
  if (!tc.allocated.empty()) ssn.topology().SetPlacing(task, FindHyperNode(ssn, tc.allocated));
  CheckScores(ScoreNodes(ssn, *task, tc.score_nodes), tc.expected);
}

// "Tasks in job first scheduler, score all nodes zero"
NodeScoreCase FirstScheduling(const std::string& mode) {
  return {Concat({EightNodes("2", "4Gi"), ThreeTierHyperNodes(),
                  json::array({PodGroupWithTopology("c1", "pg1", "q1", 1, mode, 0),
                               PodOf("c1", "p4", "", "Pending", "2", "4G", "pg1", Labelled("worker")), Queue("q1")})}),
          "c1/p4",
          "",
          1,
          {"s3-n1", "s4-n1", "s5-n1"},
          {{"s3-n1", 0.0}, {"s4-n1", 0.0}, {"s5-n1", 0.0}}};
}

json ThreeTasksOnS3(const std::string& mode) {
  return json::array({PodGroupWithTopology("c1", "pg1", "q1", 1, mode, 0),
                      PodOf("c1", "p1", "s3-n1", "Running", "2", "4G", "pg1", Labelled("master")),
                      PodOf("c1", "p2", "s3-n2", "Running", "2", "4G", "pg1", Labelled("worker")),
                      PodOf("c1", "p3", "", "Pending", "2", "4G", "pg1", Labelled("worker")), Queue("q1")});
}

// "Tasks in job rescheduled, score zero when the hyperNode of node has empty
// LCA hyperNode with jobAllocatedHyperNode": s0 lists only s1, so s2 hangs
// from the cluster top (tier 4), the LCA of s5/s6 and s3.
NodeScoreCase EmptyLca(const std::string& mode) {
  return {Concat({EightNodes("2", "4Gi"), ThreeTierHyperNodes(false), ThreeTasksOnS3(mode)}),
          "c1/p3",
          "s3",
          1,
          {"s5-n1", "s6-n1"},
          {{"s5-n1", 0.0}, {"s6-n1", 0.0}}};
}

// "Tasks in job rescheduled, score nodes according to node hypernode LCA hyperNode tier"
NodeScoreCase LcaTier(const std::string& mode, int weight) {
  NodeScoreCase tc{Concat({EightNodes("2", "4Gi"), ThreeTierHyperNodes(), ThreeTasksOnS3(mode)}),
                   "c1/p3",
                   "s3",
                   weight,
                   {"s3-n1", "s4-n1", "s5-n1"},
                   {{"s3-n1", 100.0}, {"s4-n1", 66.6}, {"s5-n1", 33.3}}};
  if (weight == 2) tc.expected = {{"s3-n1", 200.0}, {"s4-n1", 133.3}, {"s5-n1", 66.6}};
  return tc;
}

json FourNodesTwoLeaves() {
  return json::array({Node("s1-n1", "2", "4Gi"), Node("s1-n2", "2", "4Gi"), Node("s2-n1", "2", "4Gi"),
                      Node("s2-n2", "2", "4Gi"),
                      HyperNodeObject("s1", 1, json::array({MemberNode("s1-n1"), MemberNode("s1-n2")})),
                      HyperNodeObject("s2", 1, json::array({MemberNode("s2-n1"), MemberNode("s2-n2")}))});
}

json TwoTasksOnS1(const std::string& mode) {
  return json::array({PodGroupWithTopology("c1", "pg1", "q1", 1, mode, 0),
                      PodOf("c1", "p1", "s1-n1", "Running", "2", "4G", "pg1", Labelled("master")),
                      PodOf("c1", "p2", "", "Pending", "2", "4G", "pg1", Labelled("worker")), Queue("q1")});
}

// "... when hyperNodesInfo has two tier": tiers 1, 2 and the top (3).
NodeScoreCase TwoTiers(const std::string& mode) {
  return {Concat({FourNodesTwoLeaves(),
                  json::array({HyperNodeObject("s0", 2, json::array({MemberHyperNode("s1"), MemberHyperNode("s2")}))}),
                  TwoTasksOnS1(mode)}),
          "c1/p2",
          "s1",
          1,
          {"s1-n1", "s2-n1"},
          {{"s1-n1", 100.0}, {"s2-n1", 50.0}}};
}

// "... when hyperNodesInfo has one tier": tier 1 and the top (2).
NodeScoreCase OneTier(const std::string& mode) {
  return {Concat({FourNodesTwoLeaves(), TwoTasksOnS1(mode)}),
          "c1/p2",
          "s1",
          1,
          {"s1-n1", "s2-n1"},
          {{"s1-n1", 100.0}, {"s2-n1", 0.0}}};
}

// "Tasks in job rescheduled, score hyperNodes according to node LCA hyperNode
// tier and task num of the hyperNode when there are at least two hyperNodes
// have max hyperNode tier score": s3-n1 and s4-n1 tie at 2/3 (LCA s1), then
// gain their share of the job's 4 tasks (s3: 2, s4: 1).
NodeScoreCase TieByTaskNum(const std::string& mode) {
  return {Concat({EightNodes("2", "4Gi"), ThreeTierHyperNodes(),
                  json::array({PodGroupWithTopology("c1", "pg1", "q1", 3, mode, 0),
                               PodOf("c1", "p1", "s3-n1", "Running", "2", "4G", "pg1", Labelled("master")),
                               PodOf("c1", "p2", "s3-n2", "Running", "2", "4G", "pg1", Labelled("worker")),
                               PodOf("c1", "p3", "s4-n1", "Running", "2", "4G", "pg1", Labelled("worker")),
                               PodOf("c1", "p4", "", "Pending", "2", "4G", "pg1", Labelled("worker")), Queue("q1")})}),
          "c1/p4",
          "s1",
          1,
          {"s3-n1", "s4-n1", "s5-n1"},
          {{"s3-n1", 116.6}, {"s4-n1", 91.6}, {"s5-n1", 33.3}}};
}

}  // namespace

#define NODE_SCORE_CASES(Mode, mode)                                                                              \
  TEST_CASE("TestNetworkTopologyAwareNodeScore_" Mode ": Tasks in job first scheduler, score all nodes zero",      \
            "[network-topology]") {                                                                               \
    RunNodeScoreCase(FirstScheduling(mode));                                                                      \
  }                                                                                                               \
  TEST_CASE("TestNetworkTopologyAwareNodeScore_" Mode                                                             \
            ": Tasks in job rescheduled, score zero when the hyperNode of node has empty LCA hyperNode with "     \
            "jobAllocatedHyperNode",                                                                              \
            "[network-topology]") {                                                                               \
    RunNodeScoreCase(EmptyLca(mode));                                                                             \
  }                                                                                                               \
  TEST_CASE("TestNetworkTopologyAwareNodeScore_" Mode                                                             \
            ": Tasks in job rescheduled, score nodes according to node hypernode LCA hyperNode tier",             \
            "[network-topology]") {                                                                               \
    RunNodeScoreCase(LcaTier(mode, 1));                                                                           \
  }                                                                                                               \
  TEST_CASE("TestNetworkTopologyAwareNodeScore_" Mode                                                             \
            ": Tasks in job rescheduled, score hyperNodes according to node LCA hyperNode tier of the hyperNode " \
            "and jobAllocatedHyperNode when hyperNodesInfo has two tier",                                         \
            "[network-topology]") {                                                                               \
    RunNodeScoreCase(TwoTiers(mode));                                                                             \
  }                                                                                                               \
  TEST_CASE("TestNetworkTopologyAwareNodeScore_" Mode                                                             \
            ": Tasks in job rescheduled, score hyperNodes according to node LCA hyperNode tier of the hyperNode " \
            "and jobAllocatedHyperNode when hyperNodesInfo has one tier",                                         \
            "[network-topology]") {                                                                               \
    RunNodeScoreCase(OneTier(mode));                                                                              \
  }                                                                                                               \
  TEST_CASE("TestNetworkTopologyAwareNodeScore_" Mode                                                             \
            ": Tasks in job rescheduled, score hyperNodes according to node LCA hyperNode tier of the hyperNode " \
            "and jobAllocatedHyperNode with plugin weight 2",                                                     \
            "[network-topology]") {                                                                               \
    RunNodeScoreCase(LcaTier(mode, 2));                                                                           \
  }                                                                                                               \
  TEST_CASE("TestNetworkTopologyAwareNodeScore_" Mode                                                             \
            ": Tasks in job rescheduled, score hyperNodes according to node LCA hyperNode tier and task num of "  \
            "the hyperNode when there are at least two hyperNodes have max hyperNode tier score",                 \
            "[network-topology]") {                                                                               \
    RunNodeScoreCase(TieByTaskNum(mode));                                                                         \
  }

NODE_SCORE_CASES("Hard", "hard")
NODE_SCORE_CASES("Soft", "soft")
