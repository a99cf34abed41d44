#include "volcanic/api/numa.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "volcanic/api/json_fields.h"
#include "volcanic/api/parse_fields.h"
#include "volcanic/api/quantity.h"
#include "volcanic/api/status_macros.h"

namespace volcanic {
namespace {

// Large enough for any machine; keeps a hostile range from filling memory.
constexpr int kMaxCpuId = 1 << 16;

absl::StatusOr<int> CpuId(absl::string_view text) {
  int id = 0;
  if (!absl::SimpleAtoi(text, &id) || id < 0 || id > kMaxCpuId)
    return absl::InvalidArgumentError(absl::StrCat("invalid CPU id \"", text, "\""));
  return id;
}

absl::StatusOr<int> NonNegative(const json& v, const Fields& f, const std::string& key, const std::string& path) {
  ASSIGN_OR_RETURN(auto n, f.Int(v, key, path));
  if (n && (*n < 0 || *n > std::numeric_limits<int>::max())) return f.Error(path + "." + key, "must be >= 0");
  return static_cast<int>(n.value_or(0));
}

}  // namespace

absl::StatusOr<CpuSet> ParseCpuSet(const std::string& text) {
  CpuSet out;
  if (text.empty()) return out;
  for (absl::string_view range : absl::StrSplit(text, ',')) {
    std::pair<absl::string_view, absl::string_view> bounds = absl::StrSplit(range, absl::MaxSplits('-', 1));
    ASSIGN_OR_RETURN(int first, CpuId(bounds.first));
    int last = first;
    if (range.find('-') != absl::string_view::npos) {
      ASSIGN_OR_RETURN(last, CpuId(bounds.second));
      if (first > last) return absl::InvalidArgumentError(absl::StrCat("invalid range \"", range, "\""));
    }
    for (int id = first; id <= last; ++id) out.insert(id);
  }
  return out;
}

std::string FormatCpuSet(const CpuSet& s) {
  std::vector<std::string> parts;
  for (auto it = s.begin(); it != s.end();) {
    int first = *it, last = first;
    for (++it; it != s.end() && *it == last + 1; ++it) last = *it;
    parts.push_back(first == last ? absl::StrCat(first) : absl::StrCat(first, "-", last));
  }
  return absl::StrJoin(parts, ",");
}

absl::StatusOr<NumaTopology> ParseNumatopology(const nlohmann::json& obj) {
  Fields f(obj);
  ASSIGN_OR_RETURN(Meta m, ParseMeta(obj, f, false));
  NumaTopology t;
  t.name = m.name;
  ASSIGN_OR_RETURN(const json* spec, f.Find(obj, "spec", ""));
  if (!spec) return t;
  ASSIGN_OR_RETURN(Labels policies, f.StringMap(*spec, "policies", "spec"));
  t.cpu_manager_policy = policies["CPUManagerPolicy"];
  t.topology_manager_policy = policies["TopologyManagerPolicy"];
  ASSIGN_OR_RETURN(const json* numares, f.Find(*spec, "numares", "spec"));
  if (numares) {
    ASSIGN_OR_RETURN(const json* cpu, f.Find(*numares, "cpu", "spec.numares"));
    if (cpu) {
      ASSIGN_OR_RETURN(auto text, f.String(*cpu, "allocatable", "spec.numares.cpu"));
      auto set = ParseCpuSet(text.value_or(""));
      if (!set.ok()) return f.Error("spec.numares.cpu.allocatable", std::string(set.status().message()));
      t.cpu_allocatable = std::move(*set);
    }
  }
  ASSIGN_OR_RETURN(const json* details, f.Find(*spec, "cpuDetail", "spec"));
  if (details) {
    if (!details->is_object()) return f.Error("spec.cpuDetail", "must be an object");
    for (const auto& [key, cpu] : details->items()) {
      std::string path = "spec.cpuDetail." + key;
      auto id = CpuId(key);
      if (!id.ok()) return f.Error(path, std::string(id.status().message()));
      CpuInfo& info = t.cpus[*id];
      ASSIGN_OR_RETURN(info.numa, NonNegative(cpu, f, "numa", path));
      // NUMA nodes are bits of a 64-bit mask, as in the kubelet's topology manager.
      if (info.numa >= 64) return f.Error(path + ".numa", "must be < 64");
      ASSIGN_OR_RETURN(info.socket, NonNegative(cpu, f, "socket", path));
      ASSIGN_OR_RETURN(info.core, NonNegative(cpu, f, "core", path));
    }
  }
  ASSIGN_OR_RETURN(Labels reserved, f.StringMap(*spec, "resReserved", "spec"));
  if (auto it = reserved.find("cpu"); it != reserved.end()) {
    auto milli = ParseMilliQuantity(it->second);
    if (!milli.ok()) return f.Error("spec.resReserved.cpu", std::string(milli.status().message()));
    t.reserved_milli_cpu = std::max<int64_t>(*milli, 0);
  }
  return t;
}

bool NumaNode::Report(NumaTopology t) {
  if (reported_once_ && t == reported) return false;
  auto size = [](const NumaTopology& n) { return n.cpu_allocatable ? n.cpu_allocatable->size() : 0; };
  // Volcano's NumatopoInfo.Compare: as many free CPUs as before, or more.
  bool more = !reported_once_ || (reported.cpu_allocatable && size(reported) <= size(t));
  pending_ = more ? Pending::kMore : Pending::kLess;
  reported = std::move(t);
  reported_once_ = true;
  return true;
}

void NumaNode::Refresh() {
  const std::optional<CpuSet>& report = reported.cpu_allocatable;
  if (pending_ == Pending::kMore) {
    free = report;
  } else if (pending_ == Pending::kLess && report && (!free || free->size() >= report->size())) {
    free = report;
  }
  pending_ = Pending::kNone;
}

void NumaNode::Assign(const CpuSet& cpus) {
  if (!free) return;
  for (int cpu : cpus) free->erase(cpu);
}

}  // namespace volcanic
