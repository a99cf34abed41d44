// Statement (reference §4.2): operations apply at once, Commit binds and
// evicts, Discard undoes in reverse order.
#include <catch2/catch.hpp>

#include "helpers.h"
#include "volcanic/framework/session.h"
#include "volcanic/framework/statement.h"

using namespace volcanic;
using namespace volcanic::testing;

namespace {

// Records the event handler calls a session makes.
std::vector<std::string>* g_events = nullptr;

class RecorderPlugin : public Plugin {
 public:
  void OnSessionOpen(PluginHandle& h) override {
    h.AddEventHandler(
        [](const TaskInfo& t) { g_events->push_back("+" + t.name); },
        [](const TaskInfo& t) { g_events->push_back("-" + t.name); });
  }
};

struct Fixture {
  Cache cache;
  Registry registry = WithTestPlugin<RecorderPlugin>("test-recorder");
  SchedulerConf conf;
  std::vector<std::string> events;
  Fixture() {
    g_events = &events;
    conf = Conf(R"({"actions": "allocate", "tiers": [{"plugins": [{"name": "gang"}, {"name": "test-recorder"}]}]})",
                registry);
    Load(cache, json::array({Node("n1", "4", "8Gi"), Queue("q1"), PodGroup("ns", "pg", "q1", 1),
                             Pod("ns", "running", "1", "1Gi", "pg", "n1", "Running"),
                             Pod("ns", "a", "1", "1Gi", "pg"), Pod("ns", "b", "1", "1Gi", "pg")}));
  }
};

}  // namespace

TEST_CASE("discard undoes operations in reverse order and restores accounting") {
  Fixture f;
  Session ssn(f.cache, f.conf, {}, f.registry);
  REQUIRE(ssn.Open().ok());
  NodeInfo* n1 = f.cache.FindNode("n1");
  TaskInfo* a = f.cache.FindTask("ns/a");
  TaskInfo* b = f.cache.FindTask("ns/b");
  TaskInfo* running = f.cache.FindTask("ns/running");
  Resource idle_before = n1->idle;

  Statement stmt(ssn);
  stmt.Allocate(a, n1);
  stmt.Evict(running);
  stmt.Pipeline(b, n1);
  REQUIRE(a->status == TaskStatus::kAllocated);
  REQUIRE(running->status == TaskStatus::kReleasing);
  REQUIRE(b->status == TaskStatus::kPipelined);
  REQUIRE(n1->idle.Get(kCpu) == idle_before.Get(kCpu) - 1000);
  REQUIRE(n1->releasing.Get(kCpu) == 1000);
  REQUIRE(n1->pipelined.Get(kCpu) == 1000);

  f.events.clear();
  stmt.Discard();
  REQUIRE(f.events == std::vector<std::string>{"-b", "+running", "-a"});
  REQUIRE(a->status == TaskStatus::kPending);
  REQUIRE(b->status == TaskStatus::kPending);
  REQUIRE(running->status == TaskStatus::kRunning);
  REQUIRE(n1->idle == idle_before);
  REQUIRE(n1->releasing.Get(kCpu) == 0);
  REQUIRE(n1->pipelined.Get(kCpu) == 0);
  REQUIRE(a->node == nullptr);
}

TEST_CASE("commit binds allocations and records evictions; close reverts pipelines") {
  Fixture f;
  Decisions d;
  {
    Session ssn(f.cache, f.conf, {}, f.registry);
    REQUIRE(ssn.Open().ok());
    NodeInfo* n1 = f.cache.FindNode("n1");
    Statement stmt(ssn);
    stmt.Allocate(f.cache.FindTask("ns/a"), n1);
    stmt.Evict(f.cache.FindTask("ns/running"));
    stmt.Commit();
    Statement kept(ssn);  // neither committed nor discarded
    kept.Pipeline(f.cache.FindTask("ns/b"), n1);
    ssn.Close(&d);
  }
  REQUIRE(d.binds == std::vector<std::pair<std::string, std::string>>{{"ns/a", "n1"}});
  REQUIRE(d.evictions == std::vector<std::string>{"ns/running"});
  REQUIRE(d.pipelined == std::vector<std::pair<std::string, std::string>>{{"ns/b", "n1"}});
  // Binds and evictions stay assumed in the cache; the pipeline is undone.
  REQUIRE(f.cache.FindTask("ns/a")->status == TaskStatus::kBinding);
  REQUIRE(f.cache.FindTask("ns/running")->status == TaskStatus::kReleasing);
  REQUIRE(f.cache.FindTask("ns/b")->status == TaskStatus::kPending);
  REQUIRE(f.cache.FindNode("n1")->pipelined.Get(kCpu) == 0);
}

TEST_CASE("a job's allocation at open stays what it was while the session changes the job") {
  Fixture f;
  Session ssn(f.cache, f.conf, {}, f.registry);
  REQUIRE(ssn.Open().ok());
  NodeInfo* n1 = f.cache.FindNode("n1");
  JobInfo* job = f.cache.FindJob("ns/pg");
  REQUIRE(job != nullptr);
  const Resource at_open = job->allocated;  // the running pod's 1 CPU
  REQUIRE(at_open.Get(kCpu) == 1000);

  Statement stmt(ssn);
  stmt.Allocate(f.cache.FindTask("ns/a"), n1);
  stmt.Evict(f.cache.FindTask("ns/running"));
  stmt.Pipeline(f.cache.FindTask("ns/b"), n1);
  REQUIRE(job->allocated.Get(kCpu) == 1000);  // a in, running out: the same sum, by other tasks
  stmt.Discard();
  Statement again(ssn);
  again.Allocate(f.cache.FindTask("ns/a"), n1);
  REQUIRE(job->allocated.Get(kCpu) == 2000);
  REQUIRE(ssn.AllocatedAtOpen(*job) == at_open);
}
