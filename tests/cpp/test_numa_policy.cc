// The numa-aware plugin's pieces, ported from Volcano v1.15.1
// pkg/scheduler/plugins/numaaware: policy/policy_*_test.go (the topology
// manager's policies over given hints) and
// provider/cpumanager/cpu_mng_test.go (the CPU manager's hints and CPU
// assignment). Each SECTION names the Go test and its case.
#include <catch2/catch.hpp>

#include <initializer_list>
#include <string>
#include <vector>

#include "volcanic/plugins/numa_policy.h"

using namespace volcanic;

namespace {

uint64_t Mask(std::initializer_list<int> ids) {
  uint64_t m = 0;
  for (int id : ids) m |= uint64_t{1} << id;
  return m;
}

NumaHint H(std::initializer_list<int> ids, bool preferred) { return {Mask(ids), preferred}; }

// The Go tests' two providers, one resource each.
std::vector<ProviderHints> Providers(std::vector<NumaHint> cpu, std::vector<NumaHint> gpu) {
  return {{{"cpu", std::move(cpu)}}, {{"gpu", std::move(gpu)}}};
}

NumaHint Best(const char* policy, const std::vector<ProviderHints>& providers) {
  return TopologyPolicyPredicate(policy, {0, 1}, providers).first;
}

// The hint lists of cases test-1 to test-6, shared by the three merging
// policies' tests.
std::vector<ProviderHints> Case(int n) {
  switch (n) {
    case 1: return Providers({H({0, 1}, false), H({0}, true)}, {H({0, 1}, false), H({0}, true)});
    case 2: return Providers({H({0, 1}, false), H({1}, true)}, {H({0, 1}, false), H({1}, true)});
    case 3:
      return Providers({H({0, 1}, false), H({0}, true), H({1}, true)},
                       {H({0, 1}, false), H({0}, true), H({1}, true)});
    case 4: return Providers({H({0, 1}, false), H({0}, true)}, {H({0, 1}, false), H({1}, true)});
    case 5: return Providers({H({0, 1}, false), H({0}, true)}, {H({0, 1}, true)});
    default: return Providers({H({0, 1}, true)}, {H({0, 1}, true)});
  }
}

// cpu_mng_test.go's numaInfo: two NUMA nodes, one socket each, two cores of
// two threads per socket.
NumaTopology TwoSockets() {
  NumaTopology t;
  t.cpus = {{0, {0, 0, 0}}, {1, {0, 0, 0}}, {2, {0, 0, 1}}, {3, {0, 0, 1}},
            {4, {1, 1, 2}}, {5, {1, 1, 2}}, {6, {1, 1, 3}}, {7, {1, 1, 3}}};
  return t;
}

}  // namespace

TEST_CASE("best-effort and restricted pick the narrowest preferred merge", "[numa-aware]") {
  // policy_best_effort_test.go Test_best_effort_predicate and
  // policy_restricted_test.go Test_restricted_predicate: the same cases and
  // best hints; best-effort admits every one, restricted only a preferred one.
  const std::vector<NumaHint> want = {H({0}, true), H({1}, true), H({0}, true),
                                      H({0}, false), H({0}, true), H({0, 1}, true)};
  for (const char* policy : {"best-effort", "restricted"}) {
    for (int n = 1; n <= 6; ++n) {
      DYNAMIC_SECTION(policy << " test-" << n) {
        auto [best, admit] = TopologyPolicyPredicate(policy, {0, 1}, Case(n));
        CHECK(best == want[n - 1]);
        CHECK(admit == (std::string(policy) == "best-effort" || want[n - 1].preferred));
      }
    }
  }
}

TEST_CASE("single-numa-node merges only preferred single-node hints", "[numa-aware]") {
  // policy_single_numa_node_test.go Test_single_numa_node_predicate
  const std::vector<NumaHint> want = {H({0}, true), H({1}, true), H({0}, true), H({0, 1}, false),
                                      H({0, 1}, false)};
  for (int n = 1; n <= 5; ++n) {
    DYNAMIC_SECTION("test-" << n) { CHECK(Best("single-numa-node", Case(n)) == want[n - 1]); }
  }
}

TEST_CASE("none admits with no affinity", "[numa-aware]") {
  // policy_none_test.go Test_none_predicate "test-1"
  auto [best, admit] = TopologyPolicyPredicate("none", {0, 1}, {});
  CHECK(best == NumaHint{});
  CHECK(admit);
}

TEST_CASE("a provider without preference or without possible affinity", "[numa-aware]") {
  // policy.go filterProvidersHints: no hints at all is any NUMA node,
  // preferred; an empty list for a resource fits nothing preferred.
  CHECK(Best("restricted", {ProviderHints{}}) == H({0, 1}, true));
  CHECK(Best("restricted", {{{"cpu", std::vector<NumaHint>{}}}}) == H({0, 1}, false));
  CHECK(Best("restricted", {{{"cpu", std::nullopt}}}) == H({0, 1}, true));
}

TEST_CASE("the CPU manager's hints: every NUMA set with enough free CPUs, the narrowest preferred", "[numa-aware]") {
  // cpu_mng_test.go Test_GetTopologyHints
  NumaTopology topo = TwoSockets();
  struct Case {
    const char* name;
    int64_t request;
    CpuSet free;
    std::vector<NumaHint> want;
  };
  const std::vector<Case> cases = {
      {"test-1", 4000, {0, 1, 2, 3, 4, 5, 6, 7}, {H({0}, true), H({1}, true), H({0, 1}, false)}},
      {"test-2", 4000, {1, 2, 3, 4, 5, 6, 7}, {H({1}, true), H({0, 1}, false)}},
      {"test-3", 5000, {0, 1, 2, 3, 4, 5, 6, 7}, {H({0, 1}, true)}},
      {"test-4", 8000, {0, 1, 2, 3, 4, 5, 6, 7}, {H({0, 1}, true)}},
      {"test-5", 9000, {0, 1, 2, 3, 4, 5, 6, 7}, {}},
      {"test-6", 4000, {2, 3, 4, 5}, {H({0, 1}, false)}},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) {
      auto hints = CpuTopologyHints(c.request, topo, c.free);
      REQUIRE(hints);
      CHECK(*hints == c.want);
    }
  }
  // No whole CPUs asked, or no cpu entry on the node: no preference.
  CHECK_FALSE(CpuTopologyHints(1500, topo, CpuSet{0, 1}));
  CHECK_FALSE(CpuTopologyHints(-1, topo, CpuSet{0, 1}));
  CHECK_FALSE(CpuTopologyHints(2000, topo, std::nullopt));
}

TEST_CASE("the CPU manager assigns within the hint's NUMA nodes, by socket, core and thread", "[numa-aware]") {
  // cpu_mng_test.go Test_Allocate
  NumaTopology topo = TwoSockets();
  struct Case {
    const char* name;
    int64_t request;
    CpuSet free;
    NumaHint best;
    CpuSet want;
  };
  const std::vector<Case> cases = {
      {"test-1", 4000, {0, 1, 2, 3, 4, 5, 6, 7}, H({0}, true), {0, 1, 2, 3}},
      {"test-2", 4000, {1, 2, 3, 4, 5, 6, 7}, H({1}, true), {4, 5, 6, 7}},
      {"test-3", 5000, {0, 1, 2, 3, 4, 5, 6, 7}, H({0, 1}, true), {0, 1, 2, 3, 4}},
      {"test-4", 5000, {1, 2, 3, 4, 5, 6, 7}, H({0, 1}, true), {1, 4, 5, 6, 7}},
      {"test-5", 8000, {1, 2, 3, 4, 5, 6, 7}, H({0, 1}, true), {}},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) { CHECK(AssignCpus(c.request, c.best, topo, c.free) == c.want); }
  }
}

TEST_CASE("reserved CPUs are left out of hints and assignments", "[numa-aware]") {
  // cpu_mng.go: resReserved.cpu, rounded up, taken by topology first.
  NumaTopology topo = TwoSockets();
  topo.reserved_milli_cpu = 1500;  // two CPUs: core 0 of socket 0
  CHECK(*CpuTopologyHints(4000, topo, CpuSet{0, 1, 2, 3, 4, 5, 6, 7}) ==
        std::vector<NumaHint>{H({1}, true), H({0, 1}, false)});
  CHECK(AssignCpus(2000, H({0}, true), topo, CpuSet{0, 1, 2, 3, 4, 5, 6, 7}) == CpuSet{2, 3});
}

TEST_CASE("cpusets parse and print as Linux cpu lists", "[numa-aware]") {
  CHECK(*ParseCpuSet("0-3,8,10-11") == CpuSet{0, 1, 2, 3, 8, 10, 11});
  CHECK(ParseCpuSet("")->empty());
  CHECK_FALSE(ParseCpuSet("3-1").ok());
  CHECK_FALSE(ParseCpuSet("a").ok());
  CHECK(FormatCpuSet({0, 1, 2, 3, 8, 10, 11}) == "0-3,8,10-11");
  CHECK(NumaNodeCount({0, 4}, TwoSockets().cpus) == 2);
}
