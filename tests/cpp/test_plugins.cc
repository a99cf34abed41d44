// Each built-in plugin's behaviour, through whole sessions (reference §4.6).
#include <catch2/catch.hpp>

#include <map>

#include "helpers.h"
#include "volcanic/framework/scheduler.h"
#include "volcanic/framework/session.h"

using namespace volcanic;
using namespace volcanic::testing;

namespace {

std::map<std::string, std::string> Binds(const Decisions& d) { return {d.binds.begin(), d.binds.end()}; }

std::string OneTier(const std::string& actions, const std::string& plugins) {
  return R"({"actions": ")" + actions + R"(", "tiers": [{"plugins": [)" + plugins + "]}]}";
}

json PriorityClass(const std::string& name, int value) {
  return {{"kind", "PriorityClass"}, {"metadata", {{"name", name}}}, {"value", value}};
}

}  // namespace

TEST_CASE("priority: the higher-priority job gets the only slot") {
  json low = PodGroup("ns", "low", "q", 1), high = PodGroup("ns", "high", "q", 1);
  low["spec"]["priorityClassName"] = "low-pc";
  high["spec"]["priorityClassName"] = "high-pc";
  low["metadata"]["creationTimestamp"] = "2024-01-01T00:00:00Z";   // older, would win a tie
  high["metadata"]["creationTimestamp"] = "2024-01-01T00:01:00Z";
  auto d = Run(OneTier("allocate", R"({"name": "priority"}, {"name": "gang"}, {"name": "predicates"})"),
               json::array({Node("n1", "1", "1Gi"), Queue("q"), PriorityClass("low-pc", 10),
                            PriorityClass("high-pc", 1000), low, high, Pod("ns", "l", "1", "1Gi", "low"),
                            Pod("ns", "h", "1", "1Gi", "high")}));
  REQUIRE(Binds(d) == std::map<std::string, std::string>{{"ns/h", "n1"}});
}

// a and b fit and are given back when c does not: like Volcano (its last
// transaction), they count as schedulable in the message.
TEST_CASE("gang: nothing of a gang is bound unless minMember fit") {
  auto d = Run(OneTier("allocate", R"({"name": "gang"}, {"name": "predicates"})"),
               json::array({Node("n1", "2", "4Gi"), Queue("q"), PodGroup("ns", "pg", "q", 3),
                            Pod("ns", "a", "1", "1Gi", "pg"), Pod("ns", "b", "1", "1Gi", "pg"),
                            Pod("ns", "c", "1", "1Gi", "pg")}));
  REQUIRE(d.binds.empty());
  const auto& cond = d.podgroups.at("ns/pg").conditions.at(0);
  REQUIRE(cond.type == "Unschedulable");
  REQUIRE(cond.reason == "NotEnoughResources");
  REQUIRE(cond.message ==
          "1/3 tasks in gang unschedulable: pod group is not ready, 3 Pending, 3 minAvailable; "
          "Pending: 1 Unschedulable, 2 Schedulable. Origin reason is c: 0/1 nodes are unavailable: "
          "1 Insufficient cpu.");
}

TEST_CASE("gang: an invalid job (too few tasks) is not scheduled") {
  auto d = Run(OneTier("allocate", R"({"name": "gang"}, {"name": "predicates"})"),
               json::array({Node("n1", "4", "4Gi"), Queue("q"), PodGroup("ns", "pg", "q", 3),
                            Pod("ns", "a", "1", "1Gi", "pg")}));
  REQUIRE(d.binds.empty());
}

TEST_CASE("drf: the job with the lower dominant share goes first") {
  // big already runs 2 CPUs; small runs nothing, so small gets the free CPU.
  json running = Pod("ns", "big-0", "2", "1Gi", "big", "n1", "Running");
  auto d = Run(OneTier("allocate", R"({"name": "drf"}, {"name": "predicates"})"),
               json::array({Node("n1", "3", "8Gi"), Queue("q"), PodGroup("ns", "big", "q", 1),
                            PodGroup("ns", "small", "q", 1), running, Pod("ns", "big-1", "1", "1Gi", "big"),
                            Pod("ns", "small-0", "1", "1Gi", "small")}));
  REQUIRE(Binds(d) == std::map<std::string, std::string>{{"ns/small-0", "n1"}});
}

TEST_CASE("proportion: a queue gets no more than it deserves by weight") {
  // 4 CPUs, queues 1:3, both ask for 4: q1 deserves 1 CPU, q3 deserves 3.
  json objs = json::array({Node("n1", "4", "16Gi"), Queue("q1", 1), Queue("q3", 3), PodGroup("ns", "a", "q1", 1),
                           PodGroup("ns", "b", "q3", 1)});
  for (int i = 0; i < 4; ++i) {
    objs.push_back(Pod("ns", "a" + std::to_string(i), "1", "1Gi", "a"));
    objs.push_back(Pod("ns", "b" + std::to_string(i), "1", "1Gi", "b"));
  }
  auto d = Run(OneTier("allocate", R"({"name": "proportion"}, {"name": "predicates"})"), objs);
  int a = 0, b = 0;
  for (const auto& [pod, node] : d.binds) (pod[3] == 'a' ? a : b)++;
  REQUIRE(a == 1);
  REQUIRE(b == 3);
  REQUIRE(d.queue_allocated.at("q3").Get(kCpu) == 3000);
  REQUIRE(d.queue_allocated.at("root").Get(kCpu) == 4000);
}

TEST_CASE("predicates: each filter's reason, as kube-scheduler words it") {
  json hdd = {{"disk", "hdd"}};
  json tainted = Node("n2", "4", "8Gi", hdd);
  tainted["spec"]["taints"] = json::array({{{"key", "k"}, {"value", "v"}, {"effect", "NoSchedule"}}});
  json cordoned = Node("n3", "4", "8Gi", hdd);
  cordoned["spec"]["unschedulable"] = true;
  json small = Node("n4", "1", "8Gi", hdd);
  json labelled = Node("n5", "4", "8Gi", {{"disk", "ssd"}});
  json p = Pod("ns", "p", "2", "1Gi", "pg");
  p["spec"]["nodeSelector"] = {{"disk", "hdd"}};
  auto d = Run(OneTier("allocate", R"({"name": "gang"}, {"name": "predicates"})"),
               json::array({tainted, cordoned, small, labelled, Queue("q"), PodGroup("ns", "pg", "q", 1), p}));
  REQUIRE(d.binds.empty());
  REQUIRE(d.unschedulable.at("ns/p") ==
          "0/4 nodes are unavailable: 1 Insufficient cpu, 1 node(s) didn't match Pod's node affinity/selector, "
          "1 node(s) had untolerated taint {k: v}, 1 node(s) were unschedulable.");
}

TEST_CASE("predicates: host ports conflict, pod count") {
  auto with_port = [](json pod) {
    pod["spec"]["containers"][0]["ports"] = json::array({{{"containerPort", 80}, {"hostPort", 8080}}});
    return pod;
  };
  json used = with_port(Pod("ns", "web-0", "1", "1Gi", "other", "n1", "Running"));
  auto d = Run(OneTier("allocate", R"({"name": "gang"}, {"name": "predicates"})"),
               json::array({Node("n1", "4", "8Gi"), Node("n2", "4", "8Gi", json::object(), "1"),
                            Node("n3", "4", "8Gi"), Queue("q"), PodGroup("ns", "pg", "q", 1),
                            Pod("ns", "x", "1", "1Gi", "busy", "n2", "Running"), used,
                            with_port(Pod("ns", "web-1", "1", "1Gi", "pg"))}));
  REQUIRE(Binds(d) == std::map<std::string, std::string>{{"ns/web-1", "n3"}});
}

TEST_CASE("nodeorder: leastrequested spreads, binpack packs") {
  json objs = json::array({Node("n1", "4", "8Gi"), Node("n2", "4", "8Gi"), Queue("q"),
                           PodGroup("ns", "pg", "q", 1), PodGroup("ns", "old", "q", 1),
                           Pod("ns", "old-0", "2", "2Gi", "old", "n2", "Running"), Pod("ns", "p", "1", "1Gi", "pg")});
  auto spread = Run(OneTier("allocate", R"({"name": "predicates"}, {"name": "nodeorder"})"), objs);
  REQUIRE(Binds(spread) == std::map<std::string, std::string>{{"ns/p", "n1"}});
  auto packed = Run(OneTier("allocate", R"({"name": "predicates"}, {"name": "binpack"})"), objs);
  REQUIRE(Binds(packed) == std::map<std::string, std::string>{{"ns/p", "n2"}});
}

TEST_CASE("overcommit: enqueue stops once inflated capacity is promised") {
  auto pg = [](const std::string& name) {
    json g = PodGroup("ns", name, "default", 1, "Pending");
    g["spec"]["minResources"] = {{"cpu", "5"}};
    return g;
  };
  // 10 CPUs x 1.2 = 12: the first two 5-CPU jobs fit, the third does not.
  auto d = Run(OneTier("enqueue", R"({"name": "overcommit"})"),
               json::array({Node("n1", "10", "10Gi"), pg("a"), pg("b"), pg("c"), Pod("ns", "a0", "5", "1Gi", "a"),
                            Pod("ns", "b0", "5", "1Gi", "b"), Pod("ns", "c0", "5", "1Gi", "c")}));
  REQUIRE(d.podgroups.at("ns/a").phase == "Inqueue");
  REQUIRE(d.podgroups.at("ns/b").phase == "Inqueue");
  REQUIRE(d.podgroups.at("ns/c").phase == "Pending");
}

TEST_CASE("conformance: kube-system and critical pods are never victims") {
  Cache c;
  json critical = Pod("ns", "crit", "1", "1Gi", "pg", "n1", "Running");
  critical["spec"]["priorityClassName"] = "system-node-critical";
  Load(c, json::array({Node("n1", "4", "8Gi"), PodGroup("ns", "pg", "default", 1), critical,
                       Pod("kube-system", "dns", "1", "1Gi", "pg2", "n1", "Running"),
                       Pod("ns", "plain", "1", "1Gi", "pg", "n1", "Running"), Pod("ns", "new", "1", "1Gi", "pg")}));
  SchedulerConf conf = Conf(OneTier("allocate", R"({"name": "conformance"})"));
  Session ssn(c, conf, {});
  REQUIRE(ssn.Open().ok());
  std::vector<TaskInfo*> candidates = {c.FindTask("ns/crit"), c.FindTask("kube-system/dns"), c.FindTask("ns/plain")};
  auto victims = ssn.Preemptable(*c.FindTask("ns/new"), candidates);
  REQUIRE(victims == std::vector<TaskInfo*>{c.FindTask("ns/plain")});
}

TEST_CASE("configuration errors name the unknown thing and list the known ones") {
  auto bad = [](const std::string& text) {
    auto conf = ParseSchedulerConf(json::parse(text));
    REQUIRE_FALSE(conf.ok());
    return std::string(conf.status().message());
  };
  REQUIRE(bad(R"({"actions": "allocate, teleport"})") ==
          "scheduler configuration: unknown action \"teleport\"; known actions: allocate, backfill, enqueue, gangpreempt, gangreclaim, preempt, reclaim, shuffle");
  REQUIRE(bad(OneTier("allocate", R"({"name": "magic"})")).rfind("unknown plugin \"magic\"; known plugins: ", 0) == 0);
  REQUIRE(bad(OneTier("allocate", R"({"name": "binpack", "arguments": {"binpack.wieght": 2}})")) ==
          "plugin binpack: unknown argument \"binpack.wieght\"; known arguments: binpack.weight, binpack.cpu, "
          "binpack.memory, binpack.resources, binpack.resources.<name>");
  REQUIRE(bad(OneTier("allocate", R"({"name": "binpack", "arguments": {"binpack.weight": "heavy"}})")) ==
          "plugin binpack: argument binpack.weight must be a finite number, got \"heavy\"");
  REQUIRE(bad(OneTier("allocate", R"({"name": "gang", "enableJobOrdr": false})"))
              .find("unknown field \"enableJobOrdr\"") != std::string::npos);
}
