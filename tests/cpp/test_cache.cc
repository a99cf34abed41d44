// The incremental cache: accounting after every upsert/delete, assumptions.
#include <catch2/catch.hpp>

#include "helpers.h"

using namespace volcanic;
using namespace volcanic::testing;

TEST_CASE("pods are accounted on their node by status (reference §4.1)") {
  Cache c;
  Load(c, json::array({Node("n1", "4", "8Gi"), Pod("ns", "run", "1", "1Gi", "pg", "n1", "Running"),
                       Pod("ns", "done", "1", "1Gi", "pg", "n1", "Succeeded"),
                       Pod("ns", "bound", "500m", "1Gi", "pg", "n1", "Pending")}));
  json releasing = Pod("ns", "rel", "1", "1Gi", "pg", "n1", "Running");
  releasing["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z";
  Load(c, json::array({releasing}));
  NodeInfo* n = c.FindNode("n1");
  REQUIRE(c.FindTask("ns/run")->status == TaskStatus::kRunning);
  REQUIRE(c.FindTask("ns/done")->status == TaskStatus::kSucceeded);
  REQUIRE(c.FindTask("ns/bound")->status == TaskStatus::kBound);
  REQUIRE(c.FindTask("ns/rel")->status == TaskStatus::kReleasing);
  REQUIRE(n->used.Get(kCpu) == 2500);  // terminal pods use nothing
  REQUIRE(n->idle.Get(kCpu) == 1500);
  REQUIRE(n->releasing.Get(kCpu) == 1000);
  REQUIRE(n->FutureIdle().Get(kCpu) == 2500);
  REQUIRE(n->pod_count == 3);
  JobInfo* job = c.FindJob("ns/pg");
  REQUIRE(job != nullptr);
  REQUIRE(job->tasks.size() == 4);
  REQUIRE_FALSE(Cache::Schedulable(*job));  // no PodGroup object yet
  REQUIRE(job->allocated.Get(kCpu) == 1500);  // Running and Bound
  REQUIRE(job->pending_request.Get(kCpu) == 0);

  // Replacing and deleting keep the accounting exact.
  Load(c, json::array({Pod("ns", "run", "2", "1Gi", "pg", "n1", "Running")}));
  REQUIRE(n->used.Get(kCpu) == 3500);
  REQUIRE(c.Delete("Pod", "run", "ns").ok());
  REQUIRE(n->used.Get(kCpu) == 1500);
  REQUIRE(job->tasks.size() == 3);
}

TEST_CASE("a pod on an unknown node makes a placeholder until the node arrives") {
  Cache c;
  Load(c, json::array({Pod("ns", "p", "1", "1Gi", "pg", "later", "Running")}));
  NodeInfo* n = c.FindNode("later");
  REQUIRE(n != nullptr);
  REQUIRE_FALSE(n->Ready());
  Load(c, json::array({Node("later", "4", "8Gi")}));
  REQUIRE(c.FindNode("later") == n);
  REQUIRE(n->Ready());
  REQUIRE(n->idle.Get(kCpu) == 3000);
}

TEST_CASE("a failed upsert changes nothing") {
  Cache c;
  Load(c, json::array({Node("n1", "4", "8Gi"), Pod("ns", "p", "1", "1Gi", "pg", "n1", "Running")}));
  json bad = Pod("ns", "p", "lots", "1Gi", "pg", "n1", "Running");
  auto r = c.Upsert(bad);
  REQUIRE_FALSE(r.ok());
  REQUIRE(std::string(r.status().message()) ==
          "Pod ns/p: spec.containers[0].resources.requests.cpu: invalid quantity \"lots\": missing digits");
  REQUIRE(c.FindNode("n1")->used.Get(kCpu) == 1000);
  REQUIRE(c.FindTask("ns/p")->resreq.Get(kCpu) == 1000);
}

TEST_CASE("assumed binds survive stale updates until confirmed or forgotten") {
  Cache c;
  Load(c, json::array({Node("n1", "4", "8Gi"), PodGroup("ns", "pg", "default", 1), Pod("ns", "p", "1", "1Gi", "pg")}));
  TaskInfo* t = c.FindTask("ns/p");
  JobInfo* job = c.FindJob("ns/pg");
  REQUIRE(job->pending_request.Get(kCpu) == 1000);
  PlaceTask(t, c.FindNode("n1"), TaskStatus::kAllocated);
  c.AssumeBind(t);
  Load(c, json::array({Pod("ns", "p", "1", "1Gi", "pg")}));  // a stale update: still no nodeName
  REQUIRE(t->status == TaskStatus::kBinding);
  REQUIRE(c.FindNode("n1")->used.Get(kCpu) == 1000);
  REQUIRE(job->pending_request.Get(kCpu) == 0);
  REQUIRE(job->allocated.Get(kCpu) == 1000);
  REQUIRE(c.Forget("ns/p").ok());
  REQUIRE(t->status == TaskStatus::kPending);
  REQUIRE(c.FindNode("n1")->used.Get(kCpu) == 0);
  REQUIRE(job->pending_request.Get(kCpu) == 1000);
  REQUIRE(job->allocated.Get(kCpu) == 0);
  REQUIRE(absl::IsNotFound(c.Forget("ns/nope")));
}

TEST_CASE("a status change the node counts alike leaves the node's version") {
  Cache c;
  Load(c, json::array({Node("n1", "4", "8Gi"), PodGroup("ns", "pg", "default", 1), Pod("ns", "p", "1", "1Gi", "pg")}));
  c.ReadyNodes();  // changes of ready nodes are logged
  NodeInfo* n1 = c.FindNode("n1");
  TaskInfo* t = c.FindTask("ns/p");
  PlaceTask(t, n1, TaskStatus::kAllocated);
  const uint64_t placed = n1->version;
  const size_t logged = c.node_changes().size();
  c.AssumeBind(t);  // Allocated -> Binding: the node counts both alike
  CHECK(t->status == TaskStatus::kBinding);
  CHECK(n1->version == placed);
  CHECK(c.node_changes().size() == logged);
  CHECK(n1->used.Get(kCpu) == 1000);
  SetTaskStatus(t, TaskStatus::kReleasing);  // counted apart
  CHECK(n1->version > placed);
  CHECK(c.node_changes().size() > logged);
  CHECK(n1->releasing.Get(kCpu) == 1000);
  CHECK(n1->used.Get(kCpu) == 1000);
}

TEST_CASE("PodGroup upserts keep the job's tasks; queues root and default always exist") {
  Cache c;
  Load(c, json::array({Pod("ns", "p", "1", "1Gi", "pg"), PodGroup("ns", "pg", "q", 1)}));
  JobInfo* job = c.FindJob("ns/pg");
  REQUIRE(job->tasks.size() == 1);
  REQUIRE(Cache::Schedulable(*job));
  Load(c, json::array({PodGroup("ns", "pg", "q", 3)}));
  REQUIRE(c.FindJob("ns/pg") == job);
  REQUIRE(job->min_available == 3);
  REQUIRE(job->tasks.size() == 1);
  REQUIRE(job->pending_request.Get(kCpu) == 1000);  // the task sums stay with the tasks
  REQUIRE(c.queues().contains("root"));
  REQUIRE(c.queues().contains("default"));
  REQUIRE(c.Delete("Queue", "default", "").ok());
  REQUIRE(c.queues().contains("default"));
}

TEST_CASE("a bare volcano pod waits for its PodGroup; with bare_pods_as_groups it is its own group of one") {
  // Volcano v1.15 pkg/scheduler/cache/event_handlers.go getOrCreateJob: no job without a group.
  json p = Pod("ns", "solo", "1", "1Gi", "x");
  p["metadata"]["annotations"] = json::object();
  p["metadata"]["uid"] = "u-1";
  Cache waits;
  Load(waits, json::array({p}));
  REQUIRE_FALSE(Cache::Schedulable(*waits.FindJob("ns/podgroup-u-1")));
  Cache c(ParseOptions{.bare_pods_as_groups = true});
  Load(c, json::array({p}));
  JobInfo* job = c.FindJob("ns/podgroup-u-1");
  REQUIRE(job != nullptr);
  REQUIRE(job->implicit);
  REQUIRE(job->min_available == 1);
  REQUIRE(job->queue == "default");
}

TEST_CASE("an upsert reports whether the scheduler's view changed") {
  Cache c;
  auto upsert = [&c](const json& o) {
    auto r = c.Upsert(o);
    REQUIRE(r.ok());
    return *r;
  };
  json pod = Pod("ns", "p", "1", "1Gi", "pg", "n1", "Running");
  REQUIRE(upsert(Node("n1", "4", "8Gi")) == Cache::Change::kChanged);
  REQUIRE(upsert(pod) == Cache::Change::kChanged);
  pod["metadata"]["resourceVersion"] = "7";
  pod["status"]["conditions"] = json::array({{{"type", "Ready"}, {"status", "True"}}});
  REQUIRE(upsert(pod) == Cache::Change::kUnchanged);  // nothing the scheduler reads
  REQUIRE(c.FindNode("n1")->used.Get(kCpu) == 1000);
  pod["metadata"]["labels"] = {{"app", "x"}};
  REQUIRE(upsert(pod) == Cache::Change::kChanged);
  pod["status"]["phase"] = "Succeeded";
  REQUIRE(upsert(pod) == Cache::Change::kChanged);
  REQUIRE(c.FindNode("n1")->used.Get(kCpu) == 0);

  json queue = Queue("q", 2);
  REQUIRE(upsert(queue) == Cache::Change::kChanged);
  queue["status"] = {{"running", 3}, {"state", "Open"}};  // the queue controller's counts
  REQUIRE(upsert(queue) == Cache::Change::kUnchanged);
  queue["spec"]["weight"] = 3;
  REQUIRE(upsert(queue) == Cache::Change::kChanged);
  queue["metadata"]["annotations"] = {{"scheduling.volcanic.dev/job-order", "fifo"}};  // a job order of its own
  REQUIRE(upsert(queue) == Cache::Change::kChanged);
  REQUIRE(c.FindQueue("q")->job_order.policy == JobOrderPolicy::kFifo);

  json binding = {{"kind", "QueueBinding"},
                  {"metadata", {{"name", "b"}}},
                  {"spec", {{"queue", "q"}, {"namespaces", {"ns"}}}}};
  REQUIRE(upsert(binding) == Cache::Change::kChanged);
  binding["status"] = {{"namespaces", {{"ns", {{"runningPods", 1}}}}}};  // the controller's usage
  REQUIRE(upsert(binding) == Cache::Change::kUnchanged);
  binding["spec"]["limits"] = {{"maxPendingJobs", 2}};
  REQUIRE(upsert(binding) == Cache::Change::kChanged);
  REQUIRE(c.queue_bindings().at("b").max_pending_jobs == 2);

  json node = Node("n1", "4", "8Gi");
  node["status"]["conditions"] = json::array({{{"type", "MemoryPressure"}, {"status", "False"}}});
  REQUIRE(upsert(node) == Cache::Change::kUnchanged);  // a heartbeat
  node["status"]["conditions"] = json::array({{{"type", "Ready"}, {"status", "False"}}});
  REQUIRE(upsert(node) == Cache::Change::kChanged);
  REQUIRE(upsert({{"kind", "ConfigMap"}, {"metadata", {{"name", "x"}}}}) == Cache::Change::kIgnored);
}

// The per-queue sums proportion, overcommit and the queue status read at
// session open follow every change of a job: its tasks, its phase, its
// PodGroup (queue, minResources), its end (reference §4.6).
TEST_CASE("queue sums follow the jobs' tasks, phases and PodGroups") {
  Cache c;
  json pg = PodGroup("ns", "pg", "q", 2, "Pending");
  pg["spec"]["minResources"] = {{"cpu", "2"}};
  Load(c, json::array({Node("n1", "4", "8Gi"), pg, Pod("ns", "a", "1", "1Gi", "pg"), Pod("ns", "b", "1", "1Gi", "pg"),
                       Pod("ns", "bare", "1", "1Gi", "other")}));
  auto sums = [&c](const std::string& q) { return c.queue_sums().at(q); };
  REQUIRE(c.queue_sums().size() == 1);  // the pods of group `other` have no PodGroup: not counted
  REQUIRE(sums("q").jobs == 1);
  REQUIRE(sums("q").request.Get(kCpu) == 2000);
  REQUIRE(sums("q").allocated.Get(kCpu) == 0);

  JobInfo* job = c.FindJob("ns/pg");
  PlaceTask(c.FindTask("ns/a"), c.FindNode("n1"), TaskStatus::kAllocated);
  REQUIRE(sums("q").allocated.Get(kCpu) == 1000);
  REQUIRE(sums("q").request.Get(kCpu) == 2000);  // allocated plus pending
  REQUIRE(sums("q").inqueue.Get(kCpu) == 0);     // not admitted yet
  job->SetPhase("Inqueue");
  REQUIRE(sums("q").inqueue.Get(kCpu) == 1000);  // minResources less what it holds
  REQUIRE(sums("q").overcommit_inqueue.Get(kCpu) == 2000);
  PlaceTask(c.FindTask("ns/b"), c.FindNode("n1"), TaskStatus::kAllocated);
  job->SetPhase("Running");
  REQUIRE(sums("q").inqueue.Get(kCpu) == 0);  // it holds all of it
  REQUIRE(sums("q").elastic.Get(kCpu) == 0);

  pg["spec"]["queue"] = "r";  // the PodGroup moves: so do its terms
  Load(c, json::array({pg}));
  REQUIRE_FALSE(c.queue_sums().contains("q"));
  REQUIRE(sums("r").allocated.Get(kCpu) == 2000);
  REQUIRE(c.Delete("PodGroup", "pg", "ns").ok());
  REQUIRE(c.queue_sums().empty());  // pods left without their group take no part
  REQUIRE(c.Delete("Pod", "a", "ns").ok());
  REQUIRE(c.Delete("Pod", "b", "ns").ok());
  REQUIRE(c.queue_sums().empty());
}
