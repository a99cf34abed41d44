// The victim bundles of gangpreempt and gangreclaim (actions/gang_bundles.h),
// after Volcano v1.15.1 pkg/scheduler/actions/utils/bundle_test.go.
#include <catch2/catch.hpp>

#include <deque>

#include "volcanic/actions/gang_bundles.h"
#include "volcanic/framework/topology.h"

using namespace volcanic;

namespace {

// A job with tasks of 1 CPU, kept alive for the test.
struct JobFixture {
  JobInfo job;
  std::deque<TaskInfo> tasks;
  JobGangs gangs;

  TaskInfo* Add(const std::string& uid, TaskStatus status, int32_t priority = 1, const std::string& role = "worker") {
    TaskInfo& t = tasks.emplace_back();
    t.uid = uid;
    t.key = "ns/" + uid;
    t.role = role;
    t.status = status;
    t.priority = priority;
    t.resreq.Set(kCpu, 1000);
    job.AddTask(&t);
    return &t;
  }
};

std::vector<std::string> Uids(const Bundle& b) {
  std::vector<std::string> out;
  for (const TaskInfo* t : b.tasks) out.push_back(t->uid);
  return out;
}

Resource Cpu(int64_t milli) {
  Resource r;
  r.Set(kCpu, milli);
  return r;
}

}  // namespace

TEST_CASE("a job's surplus above minMember is its safe bundle, lowest priority first (TestCreateJobBundles_SafeAndWhole)") {
  JobFixture f;
  f.job.min_available = 3;
  f.job.min_task_member = {{"worker", 3}};
  std::vector<TaskInfo*> local;
  for (int i = 0; i < 5; ++i) local.push_back(f.Add(std::string(1, static_cast<char>('e' - i)), TaskStatus::kRunning, 4 - i));
  std::vector<Bundle> bundles = MakeBundles(f.job, local, f.gangs);
  REQUIRE(bundles.size() == 2);
  CHECK_FALSE(bundles[0].whole);
  CHECK(Uids(bundles[0]) == std::vector<std::string>{"a", "b"});  // priorities 0 and 1
  CHECK(bundles[1].whole);
  CHECK(Uids(bundles[1]) == std::vector<std::string>{"c", "d", "e"});
  CHECK(bundles[1].global.Get(kCpu) == 5000);
}

TEST_CASE("a job already below minMember gives everything as safe (TestCreateJobBundles_JobNotReadyShortCircuitsAllSafe)") {
  JobFixture f;
  f.job.min_available = 3;
  std::vector<TaskInfo*> local = {f.Add("a", TaskStatus::kRunning), f.Add("b", TaskStatus::kRunning)};
  f.Add("c", TaskStatus::kPending);
  std::vector<Bundle> bundles = MakeBundles(f.job, local, f.gangs);
  REQUIRE(bundles.size() == 1);
  CHECK_FALSE(bundles[0].whole);
  CHECK(bundles[0].tasks.size() == 2);
}

TEST_CASE("a role at its minTaskMember keeps its pods out of the safe bundle (GP-R1's rule)") {
  JobFixture f;
  f.job.min_available = 3;
  f.job.min_task_member = {{"ps", 1}, {"worker", 2}};
  std::vector<TaskInfo*> local = {f.Add("ps-0", TaskStatus::kRunning, 1, "ps"), f.Add("w-0", TaskStatus::kRunning),
                                  f.Add("w-1", TaskStatus::kRunning), f.Add("w-2", TaskStatus::kRunning)};
  std::vector<Bundle> bundles = MakeBundles(f.job, local, f.gangs);
  REQUIRE(bundles.size() == 2);
  CHECK(Uids(bundles[0]) == std::vector<std::string>{"w-0"});
  CHECK(Uids(bundles[1]) == std::vector<std::string>{"ps-0", "w-1", "w-2"});

  SECTION("roles are not enforced when minMember is below their sum (TestCreateJobBundles_NoTaskMinAvailable...)") {
    f.job.min_available = 2;
    bundles = MakeBundles(f.job, local, f.gangs);
    CHECK(Uids(bundles[0]) == std::vector<std::string>{"ps-0", "w-0"});
  }
}

TEST_CASE("a whole bundle survives a veto only whole, a safe one shrinks (TestApplyAllowedTasks_WholeAtomicAndSafeShrink)") {
  JobFixture f;
  TaskInfo *t1 = f.Add("t1", TaskStatus::kRunning), *t2 = f.Add("t2", TaskStatus::kRunning),
           *t3 = f.Add("t3", TaskStatus::kRunning);
  std::vector<Bundle> bundles = {{false, &f.job, {t1, t2}, Cpu(2000), Resource()},
                                 {true, &f.job, {t3}, Cpu(1000), Cpu(3000)}};
  std::vector<Bundle> kept = KeepAllowed(bundles, {t1});
  REQUIRE(kept.size() == 1);
  CHECK(Uids(kept[0]) == std::vector<std::string>{"t1"});
  CHECK(kept[0].local.Get(kCpu) == 1000);
  CHECK(KeepAllowed(bundles, {t1, t2, t3}).size() == 2);
}

TEST_CASE("bundles go safe first, then by victim order, then by what they return for the gang they break (TestSortBundlesForPreempt_TypePriorityAndROI)") {
  JobFixture low, high;
  low.job.uid = "low";
  high.job.uid = "high";
  TaskInfo *s1 = high.Add("s1", TaskStatus::kRunning), *w1 = low.Add("w1", TaskStatus::kRunning),
           *w2 = low.Add("w2", TaskStatus::kRunning);
  std::vector<Bundle> bundles = {{true, &low.job, {w1}, Cpu(1000), Cpu(4000)},
                                 {false, &high.job, {s1}, Cpu(1000), Resource()},
                                 {true, &low.job, {w2}, Cpu(1000), Cpu(2000)}};
  SortBundles(&bundles, Cpu(1000), nullptr);
  CHECK(bundles[0].tasks[0] == s1);
  CHECK(bundles[1].tasks[0] == w2);  // covers the need for a gang of 2 CPUs, not 4
  CHECK(bundles[2].tasks[0] == w1);

  SECTION("the victim order decides before the return (TestSortBundlesForPreempt_UsesVictimJobOrder)") {
    std::vector<Bundle> two = {{true, &low.job, {w2}, Cpu(1000), Cpu(2000)},
                               {true, &high.job, {s1}, Cpu(1000), Cpu(8000)}};
    SortBundles(&two, Cpu(1000), [&](const JobInfo& l, const JobInfo&) { return &l == &high.job; });
    CHECK(two[0].job == &high.job);
  }

  SECTION("ties go by job UID (TestSortBundlesForReclaim_DeterministicTieBreaker)") {
    std::vector<Bundle> two = {{true, &low.job, {w2}, Cpu(1000), Cpu(2000)},
                               {true, &high.job, {s1}, Cpu(1000), Cpu(2000)}};
    SortBundles(&two, Cpu(1000), nullptr);
    CHECK(two[0].job == &high.job);  // "high" < "low"
  }
}
