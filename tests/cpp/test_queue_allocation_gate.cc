// The queue-allocation gate on the scheduler's side (Volcano v1.15.1's
// SchedulingGatesQueueAdmission feature gate): allocate asks for the gate of
// an opted-in pod to be removed once its queue passes Allocatable
// (pkg/scheduler/actions/allocate/allocate.go, gate/schedulinggate.go), and
// capacity keeps that room for the pod until it is placed
// (pkg/scheduler/plugins/capacity/capacity.go: buildQueueReservedTasksCache,
// queueAllocatableWithReserved, the Allocate/Deallocate handlers). Volcano's
// e2e: test/e2e/schedulinggates/scheduling_gates.go.
#include <catch2/catch.hpp>

#include <algorithm>

#include "helpers.h"
#include "volcanic/framework/scheduler.h"

using namespace volcanic;
using namespace volcanic::testing;

namespace {

constexpr char kGate[] = "scheduling.volcano.sh/queue-allocation-gate";
const std::string kConf =
    R"({"actions": "allocate", "tiers": [{"plugins": [{"name": "priority"}, {"name": "gang"}]},
        {"plugins": [{"name": "predicates"}, {"name": "capacity"}]}]})";

json CapQueue(const std::string& name, const std::string& cpu) {
  json q = Queue(name);
  q["spec"]["capability"] = {{"cpu", cpu}};
  return q;
}

// A PodGroup of `min` pods in queue q, created at second `created` (job order).
json Group(const std::string& name, int created, int min = 1) {
  json g = PodGroup("ns", name, "q", min);
  g["metadata"]["creationTimestamp"] = "2024-01-01T00:00:0" + std::to_string(created) + "Z";
  return g;
}

// A pod of one CPU in `group`, with these scheduling gates, opted in to the
// queue-allocation gate unless told otherwise.
json GatedPod(const std::string& name, const std::string& group, std::vector<std::string> gates,
              bool opt_in = true) {
  json p = Pod("ns", name, "1", "1Gi", group);
  if (opt_in) p["metadata"]["annotations"][kGate] = "true";
  p["spec"]["schedulingGates"] = json::array();
  for (const auto& g : gates) p["spec"]["schedulingGates"].push_back({{"name", g}});
  return p;
}

Scheduler MakeScheduler(bool gate_on) {
  FeatureGates features;
  features.queue_allocation_gate = gate_on;
  return Scheduler(Conf(kConf), Registry::Builtins(), ParseOptions{}, features);
}

Decisions RunOnce(Scheduler& s) {
  auto d = s.RunOnce(1704067300000);
  REQUIRE(d.ok());
  return *std::move(d);
}

Decisions OneSession(bool gate_on, const json& objects) {
  Scheduler s = MakeScheduler(gate_on);
  Load(s.cache(), objects);
  return RunOnce(s);
}

}  // namespace

TEST_CASE("queue-allocation gate: off by default, nothing is ungated and gated pods keep their condition") {
  json objs = json::array({Node("n1", "8", "8Gi"), CapQueue("q", "4"), Group("a", 1), GatedPod("a", "a", {kGate})});
  Decisions d = OneSession(false, objs);
  REQUIRE(d.ungate.empty());
  REQUIRE(d.binds.empty());
  // Volcano's RecordJobStatusEvent leaves a gated pod's condition to the API server.
  REQUIRE_FALSE(d.unschedulable.contains("ns/a"));
}

TEST_CASE("queue-allocation gate: gated pods are let through as far as the queue has room, one by one") {
  json objs = json::array({Node("n1", "8", "8Gi"), CapQueue("q", "2")});
  for (int i = 1; i <= 3; ++i) {
    std::string name = "p" + std::to_string(i);
    objs.push_back(Group(name, i));
    objs.push_back(GatedPod(name, name, {kGate}));
  }
  Decisions d = OneSession(true, objs);
  // Each one that passes holds its room: the third does not fit beside the first two.
  REQUIRE(d.ungate == std::vector<std::string>{"ns/p1", "ns/p2"});
  REQUIRE(d.binds.empty());  // placed by a later session, once the pod comes back without the gate
}

TEST_CASE("queue-allocation gate: a pod without the opt-in annotation or with another gate is not ungated") {
  json objs = json::array({Node("n1", "8", "8Gi"), CapQueue("q", "4"), Group("a", 1), Group("b", 2),
                           GatedPod("a", "a", {kGate}, false), GatedPod("b", "b", {"example.com/other", kGate})});
  REQUIRE(OneSession(true, objs).ungate.empty());
}

// Volcano e2e "Multiple scheduling gates: scheduler skips until only Volcano
// gate remains, then removes it".
TEST_CASE("queue-allocation gate: once only Volcano's gate is left, the update is a change and it is ungated") {
  Scheduler s = MakeScheduler(true);
  Load(s.cache(), json::array({Node("n1", "8", "8Gi"), CapQueue("q", "4"), Group("a", 1),
                               GatedPod("a", "a", {"example.com/other", kGate})}));
  REQUIRE(RunOnce(s).ungate.empty());
  auto changed = s.cache().Upsert(GatedPod("a", "a", {kGate}));
  REQUIRE(changed.ok());
  REQUIRE(*changed == Cache::Change::kChanged);
  REQUIRE(RunOnce(s).ungate == std::vector<std::string>{"ns/a"});
  REQUIRE(*s.cache().Upsert(GatedPod("a", "a", {})) == Cache::Change::kChanged);
  Decisions d = RunOnce(s);
  REQUIRE(d.ungate.empty());
  REQUIRE(d.binds.size() == 1);
}

// Volcano e2e "Unschedulable pod with removed gate reserves queue capacity and
// blocks other pods".
TEST_CASE("queue-allocation gate: an ungated pod that waits for a node holds its queue's room until it goes") {
  json waiting = GatedPod("a", "a", {});
  waiting["spec"]["nodeSelector"] = {{"kubernetes.io/fake-node", "fake"}};
  json plain = Pod("ns", "c", "1", "1Gi", "c");
  Scheduler s = MakeScheduler(true);
  // a, ungated by an earlier session, comes last in job order: its room is
  // held from the session's start.
  Load(s.cache(), json::array({Node("n1", "8", "8Gi"), CapQueue("q", "1"), Group("b", 1), GatedPod("b", "b", {kGate}),
                               Group("c", 2), plain, Group("a", 3), waiting}));
  Decisions d = RunOnce(s);
  REQUIRE(d.ungate.empty());  // b would not fit beside a's reservation
  REQUIRE(d.binds.empty());   // nor would any pod of the queue
  REQUIRE(d.unschedulable.contains("ns/a"));  // a is no longer gated: its condition is the scheduler's
  REQUIRE(s.cache().Delete("Pod", "a", "ns").ok());
  d = RunOnce(s);
  REQUIRE(d.ungate == std::vector<std::string>{"ns/b"});
  REQUIRE(d.binds.empty());  // b now holds the room, c is blocked in turn
}

TEST_CASE("queue-allocation gate: without the feature gate an ungated opted-in pod reserves nothing") {
  json waiting = GatedPod("a", "a", {});
  waiting["spec"]["nodeSelector"] = {{"kubernetes.io/fake-node", "fake"}};
  Decisions d = OneSession(false, json::array({Node("n1", "8", "8Gi"), CapQueue("q", "1"), Group("a", 1), waiting,
                                               Group("c", 3), Pod("ns", "c", "1", "1Gi", "c")}));
  REQUIRE(d.binds.size() == 1);
}

TEST_CASE("queue-allocation gate: a placed pod gives its reservation up, a discarded one takes it back") {
  SECTION("a pod's own reservation does not count against it") {
    Decisions d = OneSession(true, json::array({Node("n1", "8", "8Gi"), CapQueue("q", "1"), Group("a", 1),
                                                GatedPod("a", "a", {})}));
    REQUIRE(d.binds.size() == 1);
  }
  SECTION("placed: the room is counted once, as allocated") {
    Decisions d = OneSession(true, json::array({Node("n1", "8", "8Gi"), CapQueue("q", "2"), Group("a", 1),
                                                GatedPod("a", "a", {}), Group("b", 2), GatedPod("b", "b", {kGate})}));
    REQUIRE(d.binds.size() == 1);
    REQUIRE(d.ungate == std::vector<std::string>{"ns/b"});
  }
  SECTION("discarded: a gang that did not fit keeps its room") {
    // g's two ungated pods: g1 fits, g2 fits no node, so the gang does not;
    // g1's allocation is discarded and both hold their room again: b does not fit.
    json g2 = GatedPod("g2", "g", {});
    g2["spec"]["nodeSelector"] = {{"kubernetes.io/fake-node", "fake"}};
    Decisions d = OneSession(true, json::array({Node("n1", "8", "8Gi"), CapQueue("q", "2"), Group("g", 1, 2),
                                                GatedPod("g1", "g", {}), g2, Group("b", 2),
                                                GatedPod("b", "b", {kGate})}));
    REQUIRE(d.binds.empty());
    REQUIRE(d.ungate.empty());
  }
}

TEST_CASE("queue-allocation gate: a new version of the PodGroup keeps its pod's reservation") {
  json waiting = GatedPod("a", "a", {});
  waiting["spec"]["nodeSelector"] = {{"kubernetes.io/fake-node", "fake"}};
  Scheduler s = MakeScheduler(true);
  Load(s.cache(), json::array({Node("n1", "8", "8Gi"), CapQueue("q", "1"), Group("a", 1), waiting, Group("b", 2),
                               GatedPod("b", "b", {kGate})}));
  json updated = Group("a", 1);
  updated["metadata"]["labels"] = {{"touched", "yes"}};  // a change of the scheduler's view
  Load(s.cache(), json::array({updated}));
  REQUIRE(s.cache().FindJob("ns/a")->holding_queue_room == 1);
  REQUIRE(RunOnce(s).ungate.empty());  // b would not fit beside a's reservation
}
