// A plugin that fails (Session::Fail, what a Python plugin's exception
// becomes) stops the session and leaves the cache as if it never ran; and
// node-local scores of the nodes a task class has not seen are asked in one
// batch (framework/node_search.h). Volcano has no such failure path: a Go
// plugin that panics takes the scheduler down.
#include <catch2/catch.hpp>

#include <map>

#include "helpers.h"
#include "volcanic/api/errors.h"
#include "volcanic/framework/scheduler.h"
#include "volcanic/framework/session.h"

using namespace volcanic;
using namespace volcanic::testing;

namespace {

// Where the test plugin fails: JobReady of the job named `job`, or close.
struct FailWhere {
  std::string job;
  bool at_close = false;
};
FailWhere g_fail;

class FailingPlugin : public Plugin {
 public:
  void OnSessionOpen(PluginHandle& h) override {
    h.AddJobReadyFn([&ssn = h.session()](const JobInfo& j) {
      if (j.name == g_fail.job) ssn.Fail(PluginError("test-failing", "job_ready failed"));
      return true;
    });
  }
  void OnSessionClose(Session& ssn) override {
    if (g_fail.at_close) ssn.Fail(PluginError("test-failing", "close failed"));
  }
};


json PriorityClass(const std::string& name, int value) {
  return {{"kind", "PriorityClass"}, {"metadata", {{"name", name}}}, {"value", value}};
}

json WithPriority(json pg, const std::string& pc) {
  pg["spec"]["priorityClassName"] = pc;
  return pg;
}

// What a session decided, comparable.
struct Seen {
  std::vector<std::pair<std::string, std::string>> binds, pipelined;
  std::vector<std::string> evictions;
  std::map<std::string, std::pair<std::string, std::vector<PodGroupCondition>>> podgroups;
  std::map<std::string, std::string> queues, unschedulable;
  bool operator==(const Seen&) const = default;
};

Seen Of(const Decisions& d) {
  Seen s{d.binds, d.pipelined, d.evictions, {}, {}, d.unschedulable};
  for (const auto& [k, st] : d.podgroups) s.podgroups[k] = {st.phase, st.conditions};
  for (const auto& [k, r] : d.queue_allocated) s.queues[k] = r.DebugString();
  return s;
}

// Fails once as `where` says, then checks the next session decides what a
// fresh scheduler decides.
Seen FailThenCompare(const std::string& conf, const json& objects, FailWhere where) {
  Registry registry = WithTestPlugin<FailingPlugin>("test-failing");
  Scheduler s(Conf(conf, registry), registry);
  Load(s.cache(), objects);
  g_fail = where;
  auto failed = s.RunOnce(0);
  REQUIRE(IsPluginError(failed.status()));
  REQUIRE(PluginOf(failed.status()) == "test-failing");
  g_fail = {};
  auto again = s.RunOnce(0);
  REQUIRE(again.ok());
  Scheduler fresh(Conf(conf, registry), registry);
  Load(fresh.cache(), objects);
  auto expected = fresh.RunOnce(0);
  REQUIRE(expected.ok());
  REQUIRE(Of(*again) == Of(*expected));
  return Of(*again);
}

}  // namespace

TEST_CASE("a failure after a commit undoes binds, enqueues and conditions") {
  json objects = json::array(
      {PriorityClass("high", 1000), PriorityClass("low", 10), Node("n1", "4", "8Gi"), Queue("q1"),
       WithPriority(PodGroup("ns", "early", "q1", 2), "high"), Pod("ns", "e0", "1", "1Gi", "early"),
       Pod("ns", "e1", "1", "1Gi", "early"), WithPriority(PodGroup("ns", "late", "q1", 1), "low"),
       Pod("ns", "l0", "1", "1Gi", "late"), PodGroup("ns", "pending", "q1", 1, "Pending"),
       Pod("ns", "w0", "1", "1Gi", "pending"), PodGroup("ns", "huge", "q1", 1), Pod("ns", "h0", "9", "1Gi", "huge")});
  const std::string conf = R"({"actions": "enqueue, allocate", "tiers": [{"plugins": [{"name": "priority"},
      {"name": "gang"}, {"name": "test-failing"}]}, {"plugins": [{"name": "predicates"}]}]})";
  // early (higher priority) is committed before late's JobReady fails.
  Seen seen = FailThenCompare(conf, objects, {"late", false});
  REQUIRE(seen.binds.size() == 4);
  REQUIRE(seen.podgroups.at("ns/pending").first == "Inqueue");
  REQUIRE(seen.podgroups.at("ns/huge").second.at(0).transition_id == "session-1");
  FailThenCompare(conf, objects, {"", true});
}

TEST_CASE("a failure at close undoes committed evictions and pipelines") {
  json low = WithPriority(PodGroup("c1", "pg1", "q1", 1), "low");
  json high = WithPriority(PodGroup("c1", "pg2", "q1", 1), "high");
  json objects = json::array({PriorityClass("low", 10), PriorityClass("high", 100000), Node("n1", "6", "6G"),
                              Queue("q1"), low, high, Pod("c1", "preemptee1", "1", "1G", "pg1", "n1", "Running"),
                              Pod("c1", "preemptee2", "1", "1G", "pg1", "n1", "Running"),
                              Pod("c1", "preemptee3", "1", "1G", "pg1", "n1", "Running"),
                              Pod("c1", "preemptor1", "5", "5G", "pg2")});
  const std::string conf = R"({"actions": "preempt", "tiers": [{"plugins": [{"name": "conformance"},
      {"name": "gang"}, {"name": "priority"}, {"name": "proportion"}, {"name": "test-failing"}]}]})";
  Seen seen = FailThenCompare(conf, objects, {"", true});
  REQUIRE(seen.evictions.size() == 2);
  REQUIRE(seen.pipelined == std::vector<std::pair<std::string, std::string>>{{"c1/preemptor1", "n1"}});
}

namespace {

// Spreads by task count (node-local) and records each batch's size.
std::vector<size_t>* g_batches = nullptr;

class BatchRecorder : public Plugin {
 public:
  void OnSessionOpen(PluginHandle& h) override {
    h.AddTaskOrderFn([](const TaskInfo& a, const TaskInfo& b) { return a.name.compare(b.name); });
    h.AddBatchNodeOrderFn([](const TaskInfo&, absl::Span<NodeInfo* const> nodes, std::vector<double>* scores) {
      g_batches->push_back(nodes.size());
      for (size_t i = 0; i < nodes.size(); ++i) (*scores)[i] -= static_cast<double>(nodes[i]->tasks.size());
    });
    h.SetNodeLocal([](const TaskInfo&) { return true; });
  }
};

}  // namespace

TEST_CASE("a task class scores the nodes changed since it last looked in one batch") {
  Registry registry = WithTestPlugin<BatchRecorder>("test-batches");
  std::vector<size_t> batches;
  g_batches = &batches;
  Scheduler s(Conf(R"({"actions": "allocate", "tiers": [{"plugins": [{"name": "test-batches"}]}]})", registry),
              registry);
  // Two task classes (1 and 2 CPUs), tried in name order: A, B, A, B.
  Load(s.cache(), json::array({Node("n0", "8", "8Gi"), Node("n1", "8", "8Gi"), Node("n2", "8", "8Gi"),
                               Node("n3", "8", "8Gi"), Queue("q"), PodGroup("ns", "pg", "q", 1),
                               Pod("ns", "t1", "1", "1Gi", "pg"), Pod("ns", "t2", "2", "1Gi", "pg"),
                               Pod("ns", "t3", "1", "1Gi", "pg"), Pod("ns", "t4", "2", "1Gi", "pg")}));
  auto d = s.RunOnce(0);
  REQUIRE(d.ok());
  REQUIRE(std::map<std::string, std::string>(d->binds.begin(), d->binds.end()) ==
          std::map<std::string, std::string>{{"ns/t1", "n0"}, {"ns/t2", "n1"}, {"ns/t3", "n2"}, {"ns/t4", "n3"}});
  // Each class: every node once; then A sees n0 and n1 changed, B sees n1 and n2.
  REQUIRE(batches == std::vector<size_t>{4, 4, 2, 2});
}
