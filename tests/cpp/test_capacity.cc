// The capacity plugin (reference §4.6, Volcano's capacity.go), flat and
// hierarchical: its queue bookkeeping, its comparisons, and what it does to
// whole sessions. Volcano's own test cases are YAML scenarios in
// tests/scenarios/capacity/; these cover the rules those cases leave open.
#include <catch2/catch.hpp>

#include <map>

#include "helpers.h"
#include "volcanic/framework/scheduler.h"
#include "volcanic/framework/session.h"
#include "volcanic/plugins/capacity_queues.h"

using namespace volcanic;
using namespace volcanic::testing;

namespace {

std::string Capacity(const std::string& actions, const std::string& capacity_fields = "",
                     const std::string& gang_fields = "") {
  return R"({"actions": ")" + actions + R"(", "tiers": [{"plugins": [{"name": "capacity")" + capacity_fields +
         R"(}, {"name": "predicates"}, {"name": "gang")" + gang_fields + "}]}]}";
}
const std::string kHierarchy = R"(, "enableHierarchy": true)";

json CQueue(const std::string& name, const std::string& parent = "", json deserved = nullptr, json capability = nullptr,
            json guarantee = nullptr) {
  json q = Queue(name);
  if (!parent.empty()) q["spec"]["parent"] = parent;
  if (!deserved.is_null()) q["spec"]["deserved"] = deserved;
  if (!capability.is_null()) q["spec"]["capability"] = capability;
  if (!guarantee.is_null()) q["spec"]["guarantee"] = {{"resource", guarantee}};
  return q;
}

json Cpu(const std::string& cpu) { return {{"cpu", cpu}}; }

json MinPodGroup(const std::string& name, const std::string& queue, const std::string& cpu,
                 const std::string& phase = "Pending") {
  json g = PodGroup("ns", name, queue, 1, phase);
  g["spec"]["minResources"] = Cpu(cpu);
  return g;
}

int BindsWithPrefix(const Decisions& d, const std::string& prefix) {
  int n = 0;
  for (const auto& [pod, node] : d.binds) n += pod.rfind(prefix, 0) == 0;
  return n;
}

// A session opened on `objects` (kept alive with its cache).
struct Opened {
  Cache cache;
  SchedulerConf conf;
  std::unique_ptr<Session> ssn;
  Opened(const std::string& conf_text, const json& objects) : conf(Conf(conf_text)) {
    Load(cache, objects);
    ssn = std::make_unique<Session>(cache, conf, SessionOptions{});
    REQUIRE(ssn->Open().ok());
  }
  const QueueInfo& Q(const std::string& name) const { return *ssn->FindQueue(name); }
};

std::string BuildError(const json& objects) {
  Opened o(Capacity("allocate", kHierarchy), objects);
  capacity::QueueTree tree;
  return tree.BuildHierarchy(*o.ssn);
}

}  // namespace

TEST_CASE("capacity: arguments are Volcano's; anything else names the plugin and the argument") {
  auto parse = [](const std::string& args) {
    return ParseSchedulerConf(json::parse(R"({"actions": "allocate", "tiers": [{"plugins": [{"name": "capacity", )"
                                          R"("arguments": )" + args + "}]}]}"));
  };
  REQUIRE(parse(R"({"ancestorReclaimLevel": 2, "capacity.DynamicResourceAllocationEnable": true,
                    "capacity.DRAConsumableCapacityEnable": "false"})").ok());
  REQUIRE(parse(R"({"ancestorReclaimLevel": -1})").ok());  // Volcano falls back to 0
  REQUIRE(std::string(parse(R"({"ancestorReclaimLevl": 1})").status().message()) ==
          "plugin capacity: unknown argument \"ancestorReclaimLevl\"; known arguments: ancestorReclaimLevel, "
          "capacity.DynamicResourceAllocationEnable, capacity.DRAConsumableCapacityEnable");
  REQUIRE(std::string(parse(R"({"ancestorReclaimLevel": "two"})").status().message()) ==
          "plugin capacity: argument ancestorReclaimLevel must be an integer, got \"two\"");
  REQUIRE(std::string(parse(R"({"capacity.DynamicResourceAllocationEnable": "maybe"})").status().message()) ==
          "plugin capacity: argument capacity.DynamicResourceAllocationEnable must be a boolean, got \"maybe\"");
}

// Volcano's ssn.HierarchyEnabled: unlike the other enable flags, a missing
// enableHierarchy means off.
TEST_CASE("capacity: without enableHierarchy, spec.parent is ignored") {
  json objs = json::array({Node("n1", "4", "8Gi"), CQueue("parent"), CQueue("child", "parent"),
                           PodGroup("ns", "pg", "parent", 1), Pod("ns", "p", "1", "1Gi", "pg")});
  REQUIRE(Run(Capacity("allocate"), objs).binds.size() == 1);
  REQUIRE(Run(Capacity("allocate", kHierarchy), objs).binds.empty());  // parent is not a leaf
  REQUIRE(Run(Capacity("allocate", R"(, "enableHierarchy": false)"), objs).binds.size() == 1);
}

// Volcano's AllocateFunc: each allocation counts at once.
TEST_CASE("capacity: allocations within a session count against the capability") {
  json objs = json::array({Node("n1", "8", "8Gi"), CQueue("q", "", nullptr, Cpu("2"))});
  for (const char* j : {"a", "b", "c"}) {
    objs.push_back(PodGroup("ns", j, "q", 1));
    objs.push_back(Pod("ns", j, "1", "1Gi", j));
  }
  Decisions d = Run(Capacity("allocate"), objs);
  REQUIRE(d.binds.size() == 2);
  REQUIRE(d.queue_allocated.at("q").Get(kCpu) == 2000);
}

TEST_CASE("capacity hierarchy: a parent's capability holds across its leaves, and it sums them") {
  json objs = json::array({Node("n1", "8", "8Gi"), CQueue("team", "", nullptr, Cpu("3")), CQueue("a", "team"),
                           CQueue("b", "team")});
  for (const char* j : {"a1", "a2", "b1", "b2"}) {
    objs.push_back(PodGroup("ns", j, std::string(1, j[0]), 1));
    objs.push_back(Pod("ns", j, "1", "1Gi", j));
  }
  Decisions d = Run(Capacity("allocate", kHierarchy), objs);
  REQUIRE(d.binds.size() == 3);
  REQUIRE(d.queue_allocated.at("team").Get(kCpu) == 3000);
  REQUIRE(d.queue_allocated.at("a").Get(kCpu) + d.queue_allocated.at("b").Get(kCpu) == 3000);
  REQUIRE(d.queue_allocated.at("root").Get(kCpu) == 3000);
}

// Deliberate difference from Volcano, which updates only the leaf's share
// in the session: there `a` (first by name, parents tied at share 0 for the
// whole session) would take both cpus.
TEST_CASE("capacity hierarchy: subtrees take turns as their shares change within the session") {
  json objs = json::array({Node("n1", "2", "8Gi"), CQueue("A", "", Cpu("2")), CQueue("a", "A", Cpu("2")),
                           CQueue("B", "", Cpu("2")), CQueue("b", "B", Cpu("2"))});
  for (const char* j : {"a1", "a2", "b1", "b2"}) {
    objs.push_back(PodGroup("ns", j, std::string(1, j[0]), 1));
    objs.push_back(Pod("ns", j, "1", "1Gi", j));
  }
  Decisions d = Run(Capacity("allocate", kHierarchy), objs);
  REQUIRE(BindsWithPrefix(d, "ns/a") == 1);
  REQUIRE(BindsWithPrefix(d, "ns/b") == 1);
}

// Volcano's checkGuaranteeConstraint: the victim's queue is above its
// deserved memory, but giving the task up would leave it below its
// guaranteed cpu.
TEST_CASE("capacity: reclaim never takes a queue below its guarantee") {
  auto objs = [](json guarantee) {
    json victims = CQueue("victims", "", {{"cpu", "4"}, {"memory", "1Gi"}}, nullptr, guarantee);
    return json::array({Node("n1", "8", "2Gi"), victims, CQueue("asker", "", {{"cpu", "2"}, {"memory", "1Gi"}}),
                        PodGroup("ns", "v", "victims", 1, "Running"), Pod("ns", "v1", "2", "1Gi", "v", "n1", "Running"),
                        Pod("ns", "v2", "2", "1Gi", "v", "n1", "Running"), PodGroup("ns", "a", "asker", 1),
                        Pod("ns", "a1", "1", "1Gi", "a")});
  };
  // Without gang's veto, which would keep both tasks of the victim job.
  std::string conf = Capacity("reclaim", "", R"(, "enableReclaimable": false)");
  REQUIRE(Run(conf, objs(nullptr)).evictions == std::vector<std::string>{"ns/v2"});
  REQUIRE(Run(conf, objs(Cpu("4"))).evictions.empty());
}

// Volcano's JobEnqueued and jobEnqueueable: admitted minimums count at once;
// what jobs hold above their minimum (elastic) does not count.
TEST_CASE("capacity: enqueue counts earlier admissions and not elastic resources") {
  json objs = json::array({Node("n1", "8", "8Gi"), CQueue("q", "", nullptr, Cpu("4"))});
  for (const char* j : {"a", "b", "c"}) objs.push_back(MinPodGroup(j, "q", "2"));
  Decisions d = Run(Capacity("enqueue"), objs);
  REQUIRE(d.podgroups.at("ns/a").phase == "Inqueue");
  REQUIRE(d.podgroups.at("ns/b").phase == "Inqueue");
  REQUIRE(d.podgroups.at("ns/c").phase == "Pending");

  // A Running job needing 1 cpu holds 3: 2 are elastic, so 3 more fit in 4.
  json elastic = json::array({Node("n1", "8", "8Gi"), CQueue("q", "", nullptr, Cpu("4")),
                              MinPodGroup("run", "q", "1", "Running"), Pod("ns", "r", "3", "1Gi", "run", "n1", "Running"),
                              MinPodGroup("new", "q", "3")});
  REQUIRE(Run(Capacity("enqueue"), elastic).podgroups.at("ns/new").phase == "Inqueue");
}

TEST_CASE("capacity: queues by share of deserved; best-effort queues after those below it") {
  json objs = json::array({Node("n1", "16", "16Gi"), CQueue("half", "", Cpu("4")), CQueue("most", "", Cpu("4")),
                           CQueue("full", "", Cpu("2")), CQueue("none")});
  for (auto [queue, cpu] : std::map<std::string, std::string>{{"half", "2"}, {"most", "3"}, {"full", "2"}, {"none", "1"}}) {
    objs.push_back(PodGroup("ns", queue, queue, 1, "Running"));
    objs.push_back(Pod("ns", queue, cpu, "1Gi", queue, "n1", "Running"));
  }
  Opened o(Capacity("allocate"), objs);
  REQUIRE(o.ssn->QueueOrder(o.Q("half"), o.Q("most")));   // 0.5 < 0.75
  REQUIRE(o.ssn->QueueOrder(o.Q("most"), o.Q("none")));   // 0.75 < 1
  REQUIRE(o.ssn->QueueOrder(o.Q("full"), o.Q("none")));   // 1 = 1: the queue with deserved first
  REQUIRE_FALSE(o.ssn->QueueOrder(o.Q("none"), o.Q("full")));
}

TEST_CASE("capacity hierarchy: victims of sibling queues before those of cousins") {
  json objs = json::array({Node("n1", "4", "4Gi"), CQueue("A"), CQueue("a1", "A"), CQueue("a2", "A"), CQueue("B"),
                           CQueue("b1", "B")});
  Opened o(Capacity("reclaim", kHierarchy), objs);
  REQUIRE(o.ssn->VictimQueueOrder(o.Q("a2"), o.Q("b1"), o.Q("a1")));
  REQUIRE_FALSE(o.ssn->VictimQueueOrder(o.Q("b1"), o.Q("a2"), o.Q("a1")));
}

TEST_CASE("capacity hierarchy: a broken tree is named, and the plugin then refuses all work") {
  REQUIRE(BuildError(json::array({CQueue("a", "nowhere")})) == "the queue a has invalid parent queue nowhere");
  REQUIRE(BuildError(json::array({CQueue("x", "y"), CQueue("y", "x")})) ==
          "cycle detected in queue hierarchy for queue x");
  REQUIRE(BuildError(json::array({CQueue("p"), CQueue("c", "p"), PodGroup("ns", "pg", "p", 1)})) ==
          "the queue p of job ns/pg is not a leaf queue");
  json objs = json::array({Node("n1", "4", "4Gi"), CQueue("ok"), CQueue("x", "y"), CQueue("y", "x"),
                           PodGroup("ns", "pg", "ok", 1), Pod("ns", "p", "1", "1Gi", "pg")});
  REQUIRE(Run(Capacity("allocate", kHierarchy), objs).binds.empty());
}

// Volcano's checkHierarchicalQueue.
TEST_CASE("capacity hierarchy: inherited capability, siblings' guarantees, summed root") {
  json objs = json::array({Node("n1", "20", "20Gi"), CQueue("P", "", Cpu("1"), {{"cpu", "10"}, {"memory", "10Gi"}}),
                           CQueue("c1", "P", nullptr, {{"memory", "4Gi"}}, Cpu("3")),
                           CQueue("c2", "P", Cpu("1"), nullptr, Cpu("2")), PodGroup("ns", "pg", "c2", 1, "Running"),
                           Pod("ns", "p", "1", "1Gi", "pg", "n1", "Running")});
  Opened o(Capacity("allocate", kHierarchy), objs);
  capacity::QueueTree tree;
  REQUIRE(tree.BuildHierarchy(*o.ssn).empty());
  const auto& c1 = *tree.Find("c1");
  REQUIRE(c1.real_capability.Get(kCpu) == 8000);                 // 10 - (3 + 2) + 3
  REQUIRE(c1.real_capability.Get(kMemory) == 4LL << 30);         // its own, under the parent's 10Gi
  REQUIRE(c1.deserved.Get(kCpu) == 3000);                        // raised to its guarantee
  REQUIRE(tree.Find("c2")->real_capability.Get(kCpu) == 7000);   // 10 - 5 + 2
  REQUIRE(tree.Find("P")->allocated.Get(kCpu) == 1000);          // its leaves' sum
  REQUIRE(tree.Find("root")->allocated.Get(kCpu) == 1000);
  REQUIRE(tree.Find("root")->deserved.Get(kCpu) == 1000);        // its children's deserved: P's 1
  REQUIRE(tree.Find("root")->guarantee.Get(kCpu) == 0);          // its children's guarantees: none
  REQUIRE(tree.Find("root")->real_capability.Get(kCpu) >= Resource::kInfinite);  // not the cluster's
}

// Volcano's buildQueueAttrs.
TEST_CASE("capacity flat: real capability is the cluster less others' guarantees; deserved within it") {
  json objs = json::array({Node("n1", "10", "10Gi"), CQueue("g", "", nullptr, nullptr, Cpu("4")),
                           CQueue("q", "", {{"cpu", "20"}, {"memory", "1Gi"}}, {{"cpu", "0"}, {"memory", "8Gi"}}),
                           PodGroup("ns", "a", "q", 1), PodGroup("ns", "b", "g", 1)});
  Opened o(Capacity("allocate"), objs);
  capacity::QueueTree tree;
  tree.BuildFlat(*o.ssn);
  const auto& q = *tree.Find("q");
  REQUIRE(q.real_capability.Get(kCpu) == 6000);            // 10 - 4; a cpu capability of 0 is no limit
  REQUIRE(q.real_capability.Get(kMemory) == 8LL << 30);
  REQUIRE(q.deserved.Get(kCpu) == 6000);                   // 20, capped
  REQUIRE(tree.Find("g")->real_capability.Get(kCpu) == 10000);
  REQUIRE(tree.Find("g")->deserved.Get(kCpu) == 4000);     // raised to its guarantee
  REQUIRE(tree.Find("default") == nullptr);                // no jobs, no entry
}

TEST_CASE("capacity: resource comparisons leave pods out") {
  Resource pod_only, cpu_pod;
  pod_only.Set(kPods, 1000);
  cpu_pod.Set(kCpu, 1000);
  cpu_pod.Set(kPods, 1000);
  REQUIRE_FALSE(capacity::Intersects(pod_only, cpu_pod));
  REQUIRE(capacity::Intersects(cpu_pod, cpu_pod));
  Resource deserved;
  deserved.Set(kCpu, 1000);
  Resource used = cpu_pod;
  used.Set(kPods, 50000);  // 50 pods: never a reason
  REQUIRE(capacity::WithinDeservedSomewhere(used, deserved, cpu_pod));
  REQUIRE_FALSE(capacity::AboveDeservedSomewhere(used, deserved, cpu_pod));
  Resource mem;
  mem.Set(kMemory, 1);
  REQUIRE_FALSE(capacity::AboveDeservedSomewhere(mem + mem, deserved, mem));  // deserved names no memory
  REQUIRE(capacity::CoversGuarantee(pod_only, Resource()));
  REQUIRE_FALSE(capacity::CoversGuarantee(Resource(), deserved));
}
