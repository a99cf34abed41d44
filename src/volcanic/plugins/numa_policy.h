// The numa-aware plugin's pieces (Volcano's numaaware/policy and
// provider/cpumanager, themselves copies of the kubelet's topology and CPU
// managers): NUMA affinity hints, the topology-manager policies that merge
// them, and the CPU manager's hints and CPU assignment.
//
// Determinism: the kubelet code Volcano copies sorts sockets and cores with
// comparators that are not strict weak orders, so the result depends on the
// sort algorithm and on Go's map order. Here sockets start in id order and
// both lists are sorted by insertion with the same comparator, which is
// what Go's sort.Slice does for up to 12 elements: the same CPUs as Volcano
// on machines of up to 12 cores per candidate list, deterministic beyond.
// Cost: hints enumerate the subsets of a node's NUMA nodes (2^n, n small);
// assignments are O(CPUs^2) at worst.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "volcanic/api/numa.h"

namespace volcanic {

// A NUMA affinity: a mask of NUMA node ids (bit i for node i), or none for
// "any NUMA node"; preferred when it is among the narrowest that fit.
struct NumaHint {
  std::optional<uint64_t> affinity;
  bool preferred = false;
  bool operator==(const NumaHint&) const = default;
};

// One hint provider's answer, by resource: nullopt for a resource without
// preference, an empty list for one that fits no affinity; no entry at all
// means the provider has no preference.
using ProviderHints = std::vector<std::pair<std::string, std::optional<std::vector<NumaHint>>>>;

// The node's topology-manager policy ("none", "best-effort", "restricted",
// "single-numa-node"; anything else acts as none) applied to the providers'
// hints: the best hint and whether the container is admitted.
std::pair<NumaHint, bool> TopologyPolicyPredicate(std::string_view policy, const std::vector<int>& numa_nodes,
                                                  const std::vector<ProviderHints>& providers);

// The CPU manager (static policy). `request_milli` is a container's cpu
// request (-1 without one); `free` the node's free CPUs.
// Hints: nullopt when the container asks for no whole number of CPUs or the
// node reports no cpu entry (no preference); else every set of NUMA nodes
// with enough free CPUs, the narrowest preferred.
std::optional<std::vector<NumaHint>> CpuTopologyHints(int64_t request_milli, const NumaTopology& topo,
                                                      const std::optional<CpuSet>& free);
// The CPUs the container gets for the best hint: within its NUMA nodes
// first, the rest anywhere; empty when there are not enough.
CpuSet AssignCpus(int64_t request_milli, const NumaHint& best, const NumaTopology& topo, const CpuSet& free);
// The kubelet's takeByTopology: whole sockets, then whole cores, then single
// CPUs of `available`; nullopt when there are not `n`.
std::optional<CpuSet> TakeByTopology(const std::map<int, CpuInfo>& topo, const CpuSet& available, int n);
// The distinct NUMA nodes of the CPUs, ascending.
std::vector<int> NumaNodesOf(const std::map<int, CpuInfo>& topo);
// How many NUMA nodes the CPUs span.
int NumaNodeCount(const CpuSet& cpus, const std::map<int, CpuInfo>& topo);

}  // namespace volcanic
