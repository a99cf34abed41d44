// Statement (reference §4.2): operations apply at once, Commit binds and
// evicts, Discard undoes in reverse order.
#include <catch2/catch.hpp>

#include "helpers.h"
#include "volcanic/framework/session.h"
#include "volcanic/framework/statement.h"

using namespace volcanic;
using namespace volcanic::testing;

namespace {

// Records the event handler calls a session makes, and refuses placing the
// task named g_refuse (Volcano's Event.Err).
std::vector<std::string>* g_events = nullptr;
std::string g_refuse;

class RecorderPlugin : public Plugin {
 public:
  void OnSessionOpen(PluginHandle& h) override {
    Session* ssn = &h.session();
    h.AddEventHandler(
        [ssn](const TaskInfo& t) {
          g_events->push_back("+" + t.name);
          if (t.name == g_refuse) ssn->RefusePlacement("no " + t.name);
        },
        [](const TaskInfo& t) { g_events->push_back("-" + t.name); });
  }
};

struct Fixture {
  Cache cache;
  Registry registry = WithTestPlugin<RecorderPlugin>("test-recorder");
  SchedulerConf conf;
  std::vector<std::string> events;
  void g_refuse_set(const std::string& name) {
    g_refuse = name;
    events.clear();
  }
  Fixture() {
    g_events = &events;
    g_refuse.clear();
    conf = Conf(R"({"actions": "allocate", "tiers": [{"plugins": [{"name": "gang"}, {"name": "test-recorder"}]}]})",
                registry);
    Load(cache, json::array({Node("n1", "4", "8Gi"), Queue("q1"), PodGroup("ns", "pg", "q1", 1),
                             Pod("ns", "running", "1", "1Gi", "pg", "n1", "Running"),
                             Pod("ns", "a", "1", "1Gi", "pg"), Pod("ns", "b", "1", "1Gi", "pg")}));
  }
};

// The fixture's session, open, and its node and tasks.
struct Opened {
  Fixture f;
  Session ssn{f.cache, f.conf, {}, f.registry};
  NodeInfo* n1 = f.cache.FindNode("n1");
  TaskInfo* a = f.cache.FindTask("ns/a");
  TaskInfo* b = f.cache.FindTask("ns/b");
  TaskInfo* running = f.cache.FindTask("ns/running");
  Resource idle_before = n1->idle;
  Opened() { REQUIRE(ssn.Open().ok()); }
};

}  // namespace

TEST_CASE("discard undoes operations in reverse order and restores accounting") {
  Opened o;
  auto& [f, ssn, n1, a, b, running, idle_before] = o;

  Statement stmt(ssn);
  REQUIRE(stmt.Allocate(a, n1).ok());
  stmt.Evict(running);
  REQUIRE(stmt.Pipeline(b, n1).ok());
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
    REQUIRE(stmt.Allocate(f.cache.FindTask("ns/a"), n1).ok());
    stmt.Evict(f.cache.FindTask("ns/running"));
    stmt.Commit();
    Statement kept(ssn);  // neither committed nor discarded
    REQUIRE(kept.Pipeline(f.cache.FindTask("ns/b"), n1).ok());
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
  REQUIRE(stmt.Allocate(f.cache.FindTask("ns/a"), n1).ok());
  stmt.Evict(f.cache.FindTask("ns/running"));
  REQUIRE(stmt.Pipeline(f.cache.FindTask("ns/b"), n1).ok());
  REQUIRE(job->allocated.Get(kCpu) == 1000);  // a in, running out: the same sum, by other tasks
  stmt.Discard();
  Statement again(ssn);
  REQUIRE(again.Allocate(f.cache.FindTask("ns/a"), n1).ok());
  REQUIRE(job->allocated.Get(kCpu) == 2000);
  REQUIRE(ssn.AllocatedAtOpen(*job) == at_open);
}

// Volcano's statement.go Allocate / Pipeline: an AllocateFunc that sets
// Event.Err rolls the placement back at once (unallocate, every
// DeallocateFunc called) and the operation fails; unevict and
// Session.Allocate (backfill) do not read the error.
TEST_CASE("an event handler refuses a placement: it is undone at once and is no operation") {
  Opened o;
  auto& [f, ssn, n1, a, b, running, idle_before] = o;

  f.g_refuse_set("a");
  Statement stmt(ssn);
  absl::Status refused = stmt.Allocate(a, n1);
  REQUIRE(refused.code() == absl::StatusCode::kFailedPrecondition);
  REQUIRE(refused.message() == "no a");
  REQUIRE(f.events == std::vector<std::string>{"+a", "-a"});
  REQUIRE(a->status == TaskStatus::kPending);
  REQUIRE(a->node == nullptr);
  REQUIRE(n1->idle == idle_before);
  REQUIRE(stmt.empty());
  REQUIRE(ssn.DiscardedPendingNum(*a->job) == 0);  // not a Discard

  f.g_refuse_set("b");
  REQUIRE(!stmt.Pipeline(b, n1).ok());
  REQUIRE(b->status == TaskStatus::kPending);
  REQUIRE(n1->pipelined.Get(kCpu) == 0);

  // Undoing an eviction cannot be refused.
  f.g_refuse_set("running");
  stmt.Evict(running);
  stmt.Discard();
  REQUIRE(running->status == TaskStatus::kRunning);

  // Nor can backfill's allocation (Volcano's Session.Allocate).
  f.g_refuse_set("a");
  ssn.AllocateAndDispatch(a, n1);
  REQUIRE(a->node == n1);
}
