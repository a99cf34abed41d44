// drf with enableHierarchy (HDRF; reference §4.6 drf row and §4.4's
// configuration guard; Volcano's drf.go). Volcano's hdrf_test.go cannot fail
// (its assertion is inverted), so the expected values here are derived from
// the algorithm: the tree arithmetic of updateHierarchicalShare, the order of
// compareQueues and the reclaim trial of reclaimFn.
#include <catch2/catch.hpp>

#include <map>
#include <random>

#include "helpers.h"
#include "volcanic/framework/scheduler.h"
#include "volcanic/framework/session.h"
#include "volcanic/plugins/hdrf.h"

using namespace volcanic;
using namespace volcanic::testing;

namespace {

constexpr int64_t kGi = int64_t{1} << 30;

Resource Res(int64_t milli_cpu, int64_t mem, int64_t pods_milli = 0) {
  Resource r;
  r.Set(kCpu, milli_cpu);
  r.Set(kMemory, mem);
  if (pods_milli) r.Set(kPods, pods_milli);
  return r;
}

QueueInfo HQueue(const std::string& name, const std::string& hierarchy, const std::string& weights) {
  QueueInfo q;
  q.name = name;
  q.uid = name;
  q.hierarchy = hierarchy;
  q.hierarchy_weights = weights;
  return q;
}

JobInfo HJob(const std::string& key, Resource allocated, Resource request) {
  JobInfo j;
  j.key = key;
  j.allocated = std::move(allocated);
  j.total_request = std::move(request);
  return j;
}

double ShareOf(const HdrfTree& t, const std::string& path) {
  auto n = t.Find(path);
  REQUIRE(n.has_value());
  return n->share;
}
bool Saturated(const HdrfTree& t, const std::string& path) {
  auto n = t.Find(path);
  REQUIRE(n.has_value());
  return n->saturated;
}

absl::btree_map<std::string, const QueueInfo*> QueueMap(std::initializer_list<const QueueInfo*> qs) {
  absl::btree_map<std::string, const QueueInfo*> m;
  for (const QueueInfo* q : qs) m[q->name] = q;
  return m;
}

json HierarchyQueue(const std::string& name, const std::string& hierarchy, const std::string& weights,
                    int created_s = 0) {
  json q = Queue(name);
  q["metadata"]["annotations"] = {{"volcano.sh/hierarchy", hierarchy}, {"volcano.sh/hierarchy-weights", weights}};
  q["metadata"]["creationTimestamp"] = FormatTimestamp(int64_t{1'600'000'000'000} + created_s * 1000);
  return q;
}

const char* kHdrfConf =
    R"({"actions": "allocate, reclaim", "tiers": [{"plugins": [{"name": "drf", "enableHierarchy": true}]}]})";

}  // namespace

// A parent is as far along as its least-served demanding child: eng holds
// dev's 2 CPUs and prod's 1 GiB, but counts dev only up to prod's share.
TEST_CASE("hdrf tree: a parent rescales unsaturated children to the smallest share") {
  HdrfTree t(Res(10000, 10 * kGi));
  QueueInfo dev = HQueue("dev", "root/eng/dev", "1/1/1"), prod = HQueue("prod", "root/eng/prod", "1/1/1");
  JobInfo jd = HJob("ns/d", Res(2000, 0), Res(10000, 0)), jp = HJob("ns/p", Res(0, kGi), Res(0, 10 * kGi));
  t.AddJob(jd, dev);
  t.AddJob(jp, prod);
  t.Finish(QueueMap({&dev, &prod}));
  REQUIRE(ShareOf(t, "root/eng/dev") == Approx(0.2));
  REQUIRE(ShareOf(t, "root/eng/prod") == Approx(0.1));
  // dev scaled by 0.1/0.2 to 1 CPU, prod as is: max(1/10 cpu, 1/10 memory).
  REQUIRE(ShareOf(t, "root/eng") == Approx(0.1));
  REQUIRE(ShareOf(t, "root") == Approx(0.1));
  REQUIRE_FALSE(Saturated(t, "root/eng"));
  // prod before dev within eng: lower share.
  REQUIRE(t.Compare(prod, dev) < 0);
  REQUIRE(t.Compare(dev, prod) > 0);
}

// A saturated child counts unscaled and is skipped when finding the
// smallest share; the parent saturates only with all its children.
TEST_CASE("hdrf tree: saturated children count as they are; a parent saturates with all of them") {
  HdrfTree t(Res(10000, 10 * kGi));
  QueueInfo dev = HQueue("dev", "root/eng/dev", "1/1/1"), prod = HQueue("prod", "root/eng/prod", "1/1/1");
  // dev has all it asked for (2 CPUs): saturated.
  JobInfo jd = HJob("ns/d", Res(2000, 0), Res(2000, 0)), jp = HJob("ns/p", Res(0, kGi), Res(0, 10 * kGi));
  t.AddJob(jd, dev);
  t.AddJob(jp, prod);
  t.Finish(QueueMap({&dev, &prod}));
  REQUIRE(Saturated(t, "root/eng/dev"));
  REQUIRE_FALSE(Saturated(t, "root/eng/prod"));
  REQUIRE(ShareOf(t, "root/eng") == Approx(0.2));  // 2 CPUs unscaled
  REQUIRE_FALSE(Saturated(t, "root/eng"));
  // Saturated goes last whatever the shares.
  REQUIRE(t.Compare(prod, dev) < 0);
  t.Adjust(jp, Res(0, 9 * kGi), +1);  // prod now has all its 10 GiB
  REQUIRE(Saturated(t, "root/eng/prod"));
  REQUIRE(Saturated(t, "root/eng"));
}

// Volcano's demandingResources: once the cluster's CPU is all allocated,
// every job holding CPU that asks for CPU is saturated, even if it wants more.
TEST_CASE("hdrf tree: a resource nobody can get more of saturates its holders") {
  HdrfTree t(Res(4000, 4 * kGi));
  QueueInfo a = HQueue("a", "root/a", "1/1"), b = HQueue("b", "root/b", "1/1");
  JobInfo ja = HJob("ns/a", Res(3000, kGi), Res(8000, 2 * kGi)), jb = HJob("ns/b", Res(0, kGi), Res(0, 3 * kGi));
  t.AddJob(ja, a);
  t.AddJob(jb, b);
  t.Finish(QueueMap({&a, &b}));
  REQUIRE_FALSE(Saturated(t, "root/a"));
  REQUIRE(t.Compare(b, a) < 0);  // b 0.25 before a 0.75
  t.Adjust(ja, Res(1000, 0), +1);  // the last CPU
  REQUIRE(Saturated(t, "root/a"));
  REQUIRE_FALSE(Saturated(t, "root/b"));  // b asks for no CPU
  t.Adjust(ja, Res(1000, 0), -1);
  REQUIRE_FALSE(Saturated(t, "root/a"));
}

TEST_CASE("hdrf tree: queues compare by share over weight, level by level") {
  HdrfTree t(Res(10000, 10 * kGi));
  // eng weighs 4: its 0.4 counts as 0.1 against sci's 0.2 at weight 1.
  QueueInfo sci = HQueue("sci", "root/sci", "1/1"), dev = HQueue("dev", "root/eng/dev", "1/4/1"),
            prod = HQueue("prod", "root/eng/prod", "1/4/3");
  JobInfo js = HJob("ns/s", Res(2000, 0), Res(10000, 0)), jd = HJob("ns/d", Res(4000, 0), Res(10000, 0)),
          jp = HJob("ns/p", Res(0, 6 * kGi), Res(0, 10 * kGi));
  t.AddJob(js, sci);
  t.AddJob(jd, dev);
  t.AddJob(jp, prod);
  t.Finish(QueueMap({&sci, &dev, &prod}));
  REQUIRE(ShareOf(t, "root/eng") == Approx(0.4));
  REQUIRE(t.Find("root/eng")->weight == 4);
  REQUIRE(t.Compare(dev, sci) < 0);
  REQUIRE(t.Compare(prod, sci) < 0);
  // Inside eng: dev 0.4/1 against prod 0.6/3 = 0.2: prod first.
  REQUIRE(t.Compare(prod, dev) < 0);
  // A queue against itself, and a path against its own prefix, tie.
  REQUIRE(t.Compare(dev, dev) == 0);
  QueueInfo eng = HQueue("eng", "root/eng", "1/4");
  REQUIRE(t.Compare(eng, dev) == 0);
}

// As Volcano reads the annotations: weights that are missing, unparsable or
// below 1 count as 1; a queue without a hierarchy sits at the root and ties
// with everything; a path no job reached is an empty node.
TEST_CASE("hdrf tree: malformed annotations fall back, never crash") {
  HdrfTree t(Res(10000, 10 * kGi));
  QueueInfo bad = HQueue("bad", "root/x/y", "1/abc"), low = HQueue("low", "root/z", "1/0.5"),
            none = HQueue("none", "", ""), empty = HQueue("empty", "root/nobody/here", "1/1/1");
  JobInfo jb = HJob("ns/b", Res(1000, 0), Res(5000, 0)), jl = HJob("ns/l", Res(3000, 0), Res(5000, 0)),
          jn = HJob("ns/n", Res(2000, 0), Res(5000, 0));
  t.AddJob(jb, bad);
  t.AddJob(jl, low);
  t.AddJob(jn, none);
  t.Finish(QueueMap({&bad, &low, &none, &empty}));
  REQUIRE(t.Find("root/x")->weight == 1);
  REQUIRE(t.Find("root/x/y")->weight == 1);
  REQUIRE(t.Find("root/z")->weight == 1);
  REQUIRE_FALSE(t.Find("root/nobody").has_value());
  REQUIRE(t.Compare(bad, low) < 0);    // 0.1 before 0.3
  REQUIRE(t.Compare(none, bad) == 0);  // only the root is compared
  REQUIRE(t.Compare(empty, bad) < 0);  // an empty node: share 0, not saturated
}

// The tree updates only the changed leaf's ancestors unless the set of
// resources left changes; either way it must equal a tree built afresh.
TEST_CASE("hdrf tree: incremental updates equal a fresh build, and trials undo exactly") {
  Resource total = Res(8000, 8 * kGi, 40000);
  std::vector<QueueInfo> queues = {HQueue("a", "root/p/a", "1/2/1"), HQueue("b", "root/p/b", "1/2/3"),
                                   HQueue("c", "root/c", "1/1"), HQueue("d", "root/q/r/d", "1/1/2/1")};
  std::vector<JobInfo> jobs;
  for (int i = 0; i < 8; ++i)
    jobs.push_back(HJob("ns/j" + std::to_string(i), Resource(), Res(1000 * (i + 2), kGi * (8 - i), 8000)));
  absl::btree_map<std::string, const QueueInfo*> qmap;
  for (const auto& q : queues) qmap[q.name] = &q;
  HdrfTree live(total);
  for (size_t i = 0; i < jobs.size(); ++i) live.AddJob(jobs[i], queues[i % queues.size()]);
  live.Finish(qmap);
  std::mt19937 rng(7);
  std::vector<Resource> held(jobs.size());
  for (int step = 0; step < 300; ++step) {
    size_t j = rng() % jobs.size();
    Resource task = Res(1000 * (1 + rng() % 2), kGi / 2 * (rng() % 3), 1000);
    bool add = rng() % 3 != 0 || held[j].Get(kPods) == 0;
    if (!add && !task.LessEqual(held[j])) continue;
    live.Adjust(jobs[j], task, add ? +1 : -1);
    if (add) held[j] += task; else held[j] -= task;
  }
  std::vector<JobInfo> settled = jobs;
  for (size_t i = 0; i < settled.size(); ++i) settled[i].allocated = held[i];
  HdrfTree fresh(total);
  for (size_t i = 0; i < settled.size(); ++i) fresh.AddJob(settled[i], queues[i % queues.size()]);
  fresh.Finish(qmap);
  for (const char* path : {"root", "root/p", "root/p/a", "root/p/b", "root/c", "root/q", "root/q/r", "root/q/r/d"}) {
    INFO(path);
    REQUIRE(live.Find(path)->share == fresh.Find(path)->share);
    REQUIRE(live.Find(path)->saturated == fresh.Find(path)->saturated);
  }
  // A trial (add, then take back) leaves every node exactly as it was.
  double before = live.Find("root/p")->share;
  live.Adjust(jobs[1], Res(3000, kGi, 1000), +1);
  live.Adjust(jobs[1], Res(3000, kGi, 1000), -1);
  REQUIRE(live.Find("root/p")->share == before);
}

TEST_CASE("drf: queue order and reclaim only with enableHierarchy") {
  // a runs 3 of 4 CPUs; b asks for 1 (and one more, so that it does not
  // saturate). With b's task and without a0, b (0.25) still goes before a
  // (0.5): a0 is a victim.
  json objs = json::array({Node("n1", "4", "4Gi"), HierarchyQueue("a", "root/a", "1/1", 0),
                           HierarchyQueue("b", "root/b", "1/1", 1), PodGroup("ns", "ja", "a", 1),
                           PodGroup("ns", "jb", "b", 1), Pod("ns", "a0", "1", "0", "ja", "n1", "Running"),
                           Pod("ns", "a1", "2", "0", "ja", "n1", "Running"), Pod("ns", "b0", "1", "0", "jb"),
                           Pod("ns", "b1", "1", "0", "jb")});
  Cache c;
  Load(c, objs);
  for (bool hierarchy : {false, true}) {
    SchedulerConf conf = Conf(std::string(R"({"actions": "allocate", "tiers": [{"plugins": [{"name": "drf", )") +
                              R"("enableHierarchy": )" + (hierarchy ? "true" : "false") + "}]}]}");
    Session ssn(c, conf, {});
    REQUIRE(ssn.Open().ok());
    // b holds nothing and goes first under HDRF; without it, a is older.
    REQUIRE(ssn.QueueOrder(*ssn.FindQueue("b"), *ssn.FindQueue("a")) == hierarchy);
    auto victims = ssn.Reclaimable(*c.FindTask("ns/b0"), {c.FindTask("ns/a0")});
    REQUIRE(victims.size() == (hierarchy ? 1u : 0u));
    // Flat drf's job order and preemption stay registered either way.
    REQUIRE(ssn.JobOrder(*c.FindJob("ns/jb"), *c.FindJob("ns/ja")));
    REQUIRE(ssn.Preemptable(*c.FindTask("ns/b0"), {c.FindTask("ns/a0")}).size() == 1);
  }
}

// reclaimFn: each candidate alone, with the reclaimer's task added to its
// queue and the candidate taken from its own: a victim only if the
// reclaimer's queue then goes strictly first.
TEST_CASE("drf hierarchy: Reclaimable takes from queues that stay ahead after giving a task") {
  auto run = [](const std::string& a_weights, int a_running, int b_running) {
    json objs = json::array({Node("n1", "8", "8Gi"), HierarchyQueue("a", "root/a", a_weights, 0),
                             HierarchyQueue("b", "root/b", "1/1", 1), PodGroup("ns", "ja", "a", 1),
                             PodGroup("ns", "jb", "b", 1), Pod("ns", "b-new", "2", "0", "jb"),
                             // b asks for more than it will hold, so it never saturates here
                             Pod("ns", "b-more", "2", "0", "jb")});
    for (int i = 0; i < a_running; ++i)
      objs.push_back(Pod("ns", "a" + std::to_string(i), "2", "0", "ja", "n1", "Running"));
    for (int i = 0; i < b_running; ++i)
      objs.push_back(Pod("ns", "b" + std::to_string(i), "2", "0", "jb", "n1", "Running"));
    Cache c;
    Load(c, objs);
    SchedulerConf conf = Conf(kHdrfConf);
    Session ssn(c, conf, {});
    REQUIRE(ssn.Open().ok());
    std::vector<TaskInfo*> candidates;
    for (int i = 0; i < a_running; ++i) candidates.push_back(c.FindTask("ns/a" + std::to_string(i)));
    bool before = ssn.QueueOrder(*ssn.FindQueue("b"), *ssn.FindQueue("a"));
    size_t n = ssn.Reclaimable(*c.FindTask("ns/b-new"), candidates).size();
    // The trial leaves the queue order as it was.
    REQUIRE(ssn.QueueOrder(*ssn.FindQueue("b"), *ssn.FindQueue("a")) == before);
    return n;
  };
  // a runs 3 x 2 CPUs of 8: losing one leaves 0.5; b gaining one has 0.25.
  REQUIRE(run("1/1", 3, 0) == 3);  // each candidate judged alone
  // a weighs 2: 0.5 / 2 = 0.25 ties with b's 0.25: not strictly first.
  REQUIRE(run("1/2", 3, 0) == 0);
  // b would pass a: b 2 x 2 CPUs = 0.5 against a's 0.25 after the loss.
  REQUIRE(run("1/1", 2, 1) == 0);
}

// §4.4: Volcano's configuration loader refuses both in one tier.
TEST_CASE("drf hierarchy: with proportion in the same tier the configuration is refused") {
  auto parse = [](const std::string& text) { return ParseSchedulerConf(json::parse(text)); };
  auto same = parse(R"({"actions": "allocate", "tiers": [{"plugins": [
      {"name": "drf", "enableHierarchy": true}, {"name": "proportion"}]}]})");
  REQUIRE_FALSE(same.ok());
  REQUIRE(same.status().message() == "tiers[0]: proportion and drf with hierarchy enabled conflicts");
  auto reversed = parse(R"({"actions": "allocate", "tiers": [{"plugins": [{"name": "gang"}]}, {"plugins": [
      {"name": "proportion"}, {"name": "drf", "enableHierarchy": true}]}]})");
  REQUIRE_FALSE(reversed.ok());
  REQUIRE(reversed.status().message() == "tiers[1]: proportion and drf with hierarchy enabled conflicts");
  REQUIRE(parse(R"({"actions": "allocate", "tiers": [{"plugins": [{"name": "drf", "enableHierarchy": true}]},
      {"plugins": [{"name": "proportion"}]}]})").ok());
  REQUIRE(parse(R"({"actions": "allocate", "tiers": [{"plugins": [
      {"name": "drf", "enableHierarchy": false}, {"name": "proportion"}]}]})").ok());
}

// hdrf_test.go "rescaling test", end to end: sci gets half the cluster, and
// eng's half is split between dev's CPUs and prod's memory. With the queues'
// ties going to sci first (it is the oldest), the order of compareQueues
// leads to 5 tasks each; see tests/scenarios/drf-hierarchy for the case as
// a scenario and docs/plugins-hdrf-sla.md on tie order.
TEST_CASE("drf hierarchy: hdrf_test.go rescaling test allocates half to sci, a quarter each to dev and prod") {
  json objs = json::array({Node("n", "10", "10G", json::object(), "50"),
                           HierarchyQueue("root-sci", "root/sci", "100/50", 0),
                           HierarchyQueue("root-eng-dev", "root/eng/dev", "100/50/50", 1),
                           HierarchyQueue("root-eng-prod", "root/eng/prod", "100/50/50", 2),
                           PodGroup("default", "pg1", "root-sci", 0), PodGroup("default", "pg21", "root-eng-dev", 0),
                           PodGroup("default", "pg22", "root-eng-prod", 0)});
  for (int i = 0; i < 10; ++i) {
    objs.push_back(Pod("default", "pg1-p" + std::to_string(i), "1", "1G", "pg1"));
    objs.push_back(Pod("default", "pg21-p" + std::to_string(i), "1", "0", "pg21"));
    objs.push_back(Pod("default", "pg22-p" + std::to_string(i), "0", "1G", "pg22"));
  }
  Decisions d = Run(R"({"actions": "allocate", "tiers": [{"plugins": [{"name": "drf", "enableHierarchy": true}]}]})", objs);
  std::map<std::string, int> per_job;
  for (const auto& [pod, node] : d.binds) per_job[pod.substr(8, pod.find("-p") - 8)]++;
  REQUIRE(per_job == std::map<std::string, int>{{"pg1", 5}, {"pg21", 5}, {"pg22", 5}});
}

// The reclaim action with HDRF deciding the victims (gang, in the same tier,
// only keeps a's job at its minMember): b's task takes one of a's four CPUs
// while b would still go first without it, and not when a's weight makes a
// go first anyway.
TEST_CASE("drf hierarchy: the reclaim action evicts for a queue HDRF puts first") {
  auto run = [](const std::string& a_weights) {
    json ja = PodGroup("ns", "ja", "a", 1, "Running"), jb = PodGroup("ns", "jb", "b", 1, "Inqueue");
    json objs = json::array({Node("n1", "4", "4Gi"), HierarchyQueue("a", "root/a", a_weights, 0),
                             HierarchyQueue("b", "root/b", "1/1", 1), ja, jb, Pod("ns", "b0", "1", "0", "jb"),
                             Pod("ns", "b1", "1", "0", "jb")});
    for (int i = 0; i < 4; ++i) objs.push_back(Pod("ns", "a" + std::to_string(i), "1", "0", "ja", "n1", "Running"));
    Scheduler s(Conf(R"({"actions": "reclaim", "tiers": [{"plugins": [{"name": "gang"},
        {"name": "drf", "enableHierarchy": true}, {"name": "predicates"}]}]})"));
    Load(s.cache(), objs);
    auto d = s.RunOnce(0);
    REQUIRE(d.ok());
    return *d;
  };
  // b with one task: 0.25; a without one of its four: 0.75.
  Decisions d = run("1/1");
  REQUIRE(d.evictions.size() == 1);
  REQUIRE(d.evictions[0].rfind("ns/a", 0) == 0);
  REQUIRE(d.pipelined == std::vector<std::pair<std::string, std::string>>{{"ns/b0", "n1"}});
  // a weighs 4: 0.75 / 4 = 0.1875 goes before b's 0.25: nothing to reclaim.
  Decisions none = run("1/4");
  REQUIRE(none.evictions.empty());
  REQUIRE(none.pipelined.empty());
}
