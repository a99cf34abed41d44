// The task-topology plugin, ported from Volcano v1.15.1
// pkg/scheduler/plugins/task-topology/topology_test.go
// Test_readTopologyFromPgAnnotations: every case (the job's tasks with their
// roles, the PodGroup's annotations, the topology or error read).
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "volcanic/plugins/task_topology.h"

using namespace volcanic;
using namespace volcanic::task_topology;

namespace {

// A job of `roles` (one task each, named job1-<role>-<i>) with `annotations`.
struct Job {
  std::vector<std::unique_ptr<TaskInfo>> tasks;
  JobInfo job;
  Job(const std::vector<std::string>& roles, Labels annotations) {
    job.ns = "default";
    job.name = "job1";
    job.annotations = std::move(annotations);
    for (size_t i = 0; i < roles.size(); ++i) {
      tasks.push_back(std::make_unique<TaskInfo>());
      tasks.back()->role = roles[i];
      tasks.back()->key = "default/t" + std::to_string(i);
      job.tasks[tasks.back()->key] = tasks.back().get();
    }
  }
};

Labels Annotations(const std::string& affinity, const std::string& anti, const std::string& order) {
  return {{kAffinityAnnotation, affinity}, {kAntiAffinityAnnotation, anti}, {kTaskOrderAnnotation, order}};
}

const std::vector<std::string> kSixRoles = {"ps", "ps", "worker", "worker", "chief", "evaluator"};

}  // namespace

TEST_CASE("task-topology: Test_readTopologyFromPgAnnotations", "[task-topology]") {
  SECTION("correct annotation") {
    Job j(kSixRoles, Annotations("ps,worker;ps,chief", "ps;worker,chief", "ps,worker,chief,evaluator"));
    auto got = ReadTopology(j.job);
    REQUIRE(got.ok());
    REQUIRE(*got);
    CHECK(**got == TaskTopology{{{"ps", "worker"}, {"ps", "chief"}},
                                {{"ps"}, {"worker", "chief"}},
                                {"ps", "worker", "chief", "evaluator"}});
  }
  SECTION("correct annotation with tasks whose names contain `-`") {
    Job j({"ps-some", "ps-some", "worker-another-some", "worker-another-some", "chief-kk", "evaluator-tt"},
          Annotations("ps-some,worker-another-some;ps-some,chief-kk", "ps-some;worker-another-some,chief-kk",
                      "ps-some,worker-another-some,chief-kk,evaluator-tt"));
    auto got = ReadTopology(j.job);
    REQUIRE(got.ok());
    REQUIRE(*got);
    CHECK(**got == TaskTopology{{{"ps-some", "worker-another-some"}, {"ps-some", "chief-kk"}},
                                {{"ps-some"}, {"worker-another-some", "chief-kk"}},
                                {"ps-some", "worker-another-some", "chief-kk", "evaluator-tt"}});
  }
  SECTION("nil annotation") {
    Job j({}, {});
    auto got = ReadTopology(j.job);
    REQUIRE(got.ok());
    CHECK_FALSE(*got);
  }
  SECTION("invalid annotation") {
    Job j(kSixRoles, Annotations("$%GF$^trtqwrg^", "ps;worker,chief;#@FGEW^vfa897bgs;;", "ps,worker,chief,evaluator,,,"));
    auto got = ReadTopology(j.job);
    REQUIRE_FALSE(got.ok());
    CHECK(got.status().message() == "task $%GF$^trtqwrg^ do not exist in job <default/job1>");
  }
  SECTION("invalid task name") {
    Job j({"ps", "ps", "worker", "worker"}, Annotations("ps,worker", "ps", "ps,worker,chief"));
    auto got = ReadTopology(j.job);
    REQUIRE_FALSE(got.ok());
    CHECK(got.status().message() == "task chief do not exist in job <default/job1>");
  }
  SECTION("duplicate task name") {
    Job j({"ps", "ps", "worker", "worker"}, Annotations("ps,worker", "ps,ps", "ps,worker"));
    auto got = ReadTopology(j.job);
    REQUIRE_FALSE(got.ok());
    CHECK(got.status().message() == "task ps is duplicate in job <default/job1>");
  }
  SECTION("redundant punctuations") {
    Job j(kSixRoles, Annotations("ps,worker;ps,,chief,;", "ps;worker,chief;;;", "ps,worker,chief,evaluator,,,"));
    auto got = ReadTopology(j.job);
    REQUIRE(got.ok());
    REQUIRE(*got);
    CHECK(**got == TaskTopology{{{"ps", "worker"}, {"ps", "", "chief", ""}, {""}},
                                {{"ps"}, {"worker", "chief"}, {""}, {""}, {""}},
                                {"ps", "worker", "chief", "evaluator", "", "", ""}});
  }
}
