// The nodegroup plugin's node scores and predicate codes, ported from
// Volcano v1.15.1 pkg/scheduler/plugins/nodegroup/nodegroup_test.go
// TestNodeGroup: every case, every node. A Go status Success is a fit here,
// UnschedulableAndUnresolvable a misfit that preemption cannot resolve
// (Session::PredicateForPreempt false). Placements in whole sessions are
// scenarios (tests/scenarios/nodegroup).
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "topology_helpers.h"

using namespace volcanic;
using namespace volcanic::testing;

namespace {

json GroupNode(const std::string& name, const std::string& cpu, const std::string& mem, const std::string& group) {
  json labels = json::object();
  if (!group.empty()) labels["volcano.sh/nodegroup-name"] = group;
  return Node(name, cpu, mem, labels);
}

json Nodes() {
  return json::array({GroupNode("n1", "2", "4Gi", "group1"), GroupNode("n2", "4", "16Gi", "group2"),
                      GroupNode("n3", "4", "16Gi", "group3"), GroupNode("n4", "4", "16Gi", "group4"),
                      GroupNode("n5", "4", "16Gi", "")});
}

json Affinity(json required, json preferred, json anti_required, json anti_preferred) {
  json a = json::object();
  if (!required.empty() || !preferred.empty())
    a["nodeGroupAffinity"] = {{"requiredDuringSchedulingIgnoredDuringExecution", required},
                              {"preferredDuringSchedulingIgnoredDuringExecution", preferred}};
  if (!anti_required.empty() || !anti_preferred.empty())
    a["nodeGroupAntiAffinity"] = {{"requiredDuringSchedulingIgnoredDuringExecution", anti_required},
                                  {"preferredDuringSchedulingIgnoredDuringExecution", anti_preferred}};
  return a;
}

// util.MakeQueue(name).Affinity(affinity).Parent(parent).
json QueueWith(const std::string& name, json affinity, const std::string& parent = "") {
  json q = Queue(name);
  if (!affinity.is_null()) q["spec"]["affinity"] = std::move(affinity);
  if (!parent.empty()) q["spec"]["parent"] = parent;
  return q;
}

// The affinity of rootQ and queue1.
json Q1Affinity() {
  return Affinity({"group1", "group3"}, {"group3"}, {"group2", "group4"}, {"group4"});
}

struct Case {
  json queues;
  std::string queue;  // the PodGroup's queue
  json arguments = json::object();
  bool hierarchy = false;
  std::map<std::string, double> scores;
  std::vector<std::string> fits;  // the nodes with status Success
};

void RunCase(const Case& c) {
  json plugin = {{"name", "nodegroup"}, {"enableNodeOrder", true}, {"enablePredicate", true},
                 {"enableHierarchy", c.hierarchy}, {"arguments", c.arguments}};
  json conf = {{"actions", "allocate"}, {"tiers", json::array({{{"plugins", json::array({plugin})}}})}};
  json objects = Nodes();
  for (const json& q : c.queues) objects.push_back(q);
  objects.push_back(PodGroup("c1", "pg", c.queue, 0, "Pending"));
  objects.push_back(Pod("c1", "p", "2", "4Gi", "pg"));
  Cache cache;
  Load(cache, objects);
  SchedulerConf sc = Conf(conf.dump());
  Session ssn(cache, sc, {});
  REQUIRE(ssn.Open().ok());
  const TaskInfo* task = cache.FindTask("c1/p");
  REQUIRE(task != nullptr);
  std::vector<std::string> names;
  for (const auto& [node, score] : c.scores) names.push_back(node);
  auto got = ScoreNodes(ssn, *task, names);
  for (const auto& [node, score] : c.scores) {
    INFO(node << ": Volcano scores " << score << ", volcanic " << got.at(node));
    CHECK(got.at(node) == score);
    bool fits = std::find(c.fits.begin(), c.fits.end(), node) != c.fits.end();
    std::vector<std::string> reasons;
    INFO("Volcano: " << (fits ? "Success" : "UnschedulableAndUnresolvable"));
    CHECK(ssn.Predicate(*task, *FindNode(ssn, node), &reasons) == fits);
    if (!fits) CHECK_FALSE(ssn.PredicateForPreempt(*task, *FindNode(ssn, node)));
  }
}

}  // namespace

TEST_CASE("nodegroup: TestNodeGroup", "[nodegroup]") {
  const json no_affinity = nullptr;
  SECTION("case: soft constraints is subset of hard constraints") {
    RunCase({json::array({QueueWith("q1", Q1Affinity(), "root")}), "q1", json::object(), false,
             {{"n1", 100}, {"n2", 0}, {"n3", 150}, {"n4", -1}, {"n5", 0}}, {"n1", "n3", "n4"}});
  }
  SECTION("case: soft constraints is not subset of hard constraints") {
    json a = Affinity({"group1"}, {"group3"}, {"group2"}, {"group4"});
    RunCase({json::array({QueueWith("q2", a, "root")}), "q2", json::object(), false,
             {{"n1", 100}, {"n2", 0}, {"n3", 50}, {"n4", -1}, {"n5", 0}}, {"n1", "n3", "n4"}});
  }
  SECTION("case: affinity is not set for the queue, pods still cannot be scheduled to nodes with the "
          "nodegroup label when strict=false") {
    RunCase({json::array({QueueWith("root-no-affinity", no_affinity)}), "root-no-affinity", {{"strict", false}}, false,
             {{"n1", 0}, {"n2", 0}, {"n3", 0}, {"n4", 0}, {"n5", 0}}, {"n5"}});
  }
  SECTION("case: affinity inherits from parent queue") {
    json queues = json::array({QueueWith("root", Q1Affinity()), QueueWith("q1", Q1Affinity(), "root"),
                               QueueWith("q1-child", no_affinity, "q1")});
    RunCase({queues, "q1-child", json::object(), true, {{"n1", 100}, {"n2", 0}, {"n3", 150}, {"n4", -1}, {"n5", 0}},
             {"n1", "n3", "n4"}});
  }
  SECTION("case: affinity inherits from ancestor queue if parent queue has no affinity") {
    json queues = json::array({QueueWith("root", Q1Affinity()), QueueWith("q-no-affinity", no_affinity, "root"),
                               QueueWith("q-no-affinity-child", no_affinity, "q-no-affinity")});
    RunCase({queues, "q-no-affinity-child", json::object(), true,
             {{"n1", 100}, {"n2", 0}, {"n3", 150}, {"n4", -1}, {"n5", 0}}, {"n1", "n3", "n4"}});
  }
  SECTION("case: queue without affinity") {
    // The Go case puts pg4 in q-no-affinity-child, which it does not create.
    RunCase({json::array({QueueWith("q-no-affinity", no_affinity, "root")}), "q-no-affinity-child", json::object(),
             false, {{"n1", 0}, {"n2", 0}, {"n3", 0}, {"n4", 0}, {"n5", 0}}, {}});
  }
  SECTION("case: preferred nodegroup priority ordering") {
    json a = Affinity(json::array(), {"group1", "group3"}, json::array(), json::array());
    RunCase({json::array({QueueWith("q3", a)}), "q3", {{"enablePreferredOrder", true}}, false,
             {{"n1", 50}, {"n2", 0}, {"n3", 25}, {"n4", 0}, {"n5", 0}}, {"n1", "n3"}});
  }
  SECTION("without enableHierarchy a child queue inherits nothing") {
    json queues = json::array({QueueWith("q1", Q1Affinity(), "root"), QueueWith("q1-child", no_affinity, "q1")});
    RunCase({queues, "q1-child", json::object(), false, {{"n1", 0}, {"n3", 0}, {"n5", 0}}, {}});
  }
}
