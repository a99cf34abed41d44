// A node's NUMA layout as Volcano's resource exporter reports it
// (nodeinfo.volcano.sh/v1alpha1 Numatopology, named after its node), the
// part the numa-aware plugin reads: the kubelet's CPU-manager and
// topology-manager policies, the CPUs not exclusively held (numares.cpu
// allocatable, a Linux cpuset list such as "0-3,8"), each CPU's NUMA node,
// socket and core, and the CPUs the kubelet reserves (resReserved.cpu).
//
// Bad input: as parse.h; a cpuset that does not parse is an error naming the
// field (Volcano logs it and reads an empty set).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace volcanic {

using CpuSet = std::set<int>;

// k8s.io/utils/cpuset Parse: "" is empty; ranges "a-b" with a <= b, comma-separated.
absl::StatusOr<CpuSet> ParseCpuSet(const std::string& text);
std::string FormatCpuSet(const CpuSet& s);  // "0-3,8"

struct CpuInfo {
  int numa = 0, socket = 0, core = 0;
  bool operator==(const CpuInfo&) const = default;
};

struct NumaTopology {
  std::string name;  // the node's
  std::string cpu_manager_policy, topology_manager_policy;  // spec.policies
  std::optional<CpuSet> cpu_allocatable;  // spec.numares.cpu.allocatable; nullopt: no cpu entry
  std::map<int, CpuInfo> cpus;            // spec.cpuDetail by CPU id
  int64_t reserved_milli_cpu = -1;        // spec.resReserved.cpu; -1: none
  bool operator==(const NumaTopology&) const = default;
};

absl::StatusOr<NumaTopology> ParseNumatopology(const nlohmann::json& obj);

// What the scheduler keeps of a node's layout across sessions (Volcano's
// NodeInfo NumaInfo and NumaSchedulerInfo): the latest report, and the CPUs
// sessions see as free. Those are the report's, less what sessions assigned
// since (Assign), until a report shows at least as many free CPUs as the one
// before it; a report showing fewer replaces them only when it has fewer.
struct NumaNode {
  NumaTopology reported;
  std::optional<CpuSet> free;  // nullopt: no cpu entry
  // Takes a report (the first, or a replacement); false if it is the last one
  // again (which keeps what sessions assigned).
  bool Report(NumaTopology t);
  // Applies the last report to `free` (at session open, as Volcano's snapshot does).
  void Refresh();
  // CPUs a session assigned to the tasks it placed on the node.
  void Assign(const CpuSet& cpus);

 private:
  enum class Pending : uint8_t { kNone, kMore, kLess };
  Pending pending_ = Pending::kMore;
  bool reported_once_ = false;
};

}  // namespace volcanic
