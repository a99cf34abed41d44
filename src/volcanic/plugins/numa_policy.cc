#include "volcanic/plugins/numa_policy.h"

#include <algorithm>
#include <set>

namespace volcanic {
namespace {

using Details = std::map<int, CpuInfo>;

int Count(uint64_t mask) { return __builtin_popcountll(mask); }

uint64_t MaskOf(const std::vector<int>& ids) {
  uint64_t mask = 0;
  for (int id : ids) mask |= uint64_t{1} << id;
  return mask;
}

bool InMask(uint64_t mask, int numa) { return numa < 64 && (mask >> numa & 1) != 0; }

// The kubelet's bitmask IsNarrowerThan: fewer NUMA nodes, then the lower mask.
bool Narrower(uint64_t a, uint64_t b) { return Count(a) == Count(b) ? a < b : Count(a) < Count(b); }

// A CPU's NUMA node as Go reads a map: a CPU the topology does not list is
// on node 0.
int NumaOf(const Details& d, int cpu) {
  auto it = d.find(cpu);
  return it == d.end() ? 0 : it->second.numa;
}

template <typename Pred>
CpuSet CpusWhere(const Details& d, Pred pred) {
  CpuSet out;
  for (const auto& [cpu, info] : d)
    if (pred(info)) out.insert(cpu);
  return out;
}

CpuSet Cpus(const Details& d) {
  return CpusWhere(d, [](const CpuInfo&) { return true; });
}
CpuSet CpusInSocket(const Details& d, int s) {
  return CpusWhere(d, [s](const CpuInfo& i) { return i.socket == s; });
}
CpuSet CpusInCore(const Details& d, int c) {
  return CpusWhere(d, [c](const CpuInfo& i) { return i.core == c; });
}

template <typename Field>
std::set<int> Distinct(const Details& d, Field field, std::optional<int> socket = std::nullopt) {
  std::set<int> out;
  for (const auto& [cpu, info] : d)
    if (!socket || info.socket == *socket) out.insert(info.*field);
  return out;
}

Details KeepOnly(const Details& d, const CpuSet& keep) {
  Details out;
  for (const auto& [cpu, info] : d)
    if (keep.contains(cpu)) out.emplace(cpu, info);
  return out;
}

size_t IntersectSize(const std::set<int>& a, const std::set<int>& b) {
  return std::count_if(a.begin(), a.end(), [&b](int x) { return b.contains(x); });
}

CpuSet Minus(const CpuSet& a, const CpuSet& b) {
  CpuSet out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::inserter(out, out.end()));
  return out;
}

// Go's sort.Slice on up to 12 elements: insertion sort with `less`.
template <typename Less>
void InsertionSort(std::vector<int>& v, Less less) {
  for (size_t i = 1; i < v.size(); ++i)
    for (size_t j = i; j > 0 && less(v[j], v[j - 1]); --j) std::swap(v[j], v[j - 1]);
}

// The kubelet's cpuAccumulator as Volcano copies it, quirks included: its
// "free sockets" and "free cores" intersect socket and core ids with CPU ids.
class Accumulator {
 public:
  Accumulator(const Details& topo, const CpuSet& available, int n)
      : topo_(topo), details_(KeepOnly(topo, available)), needed_(n) {}

  void Take(const CpuSet& cpus) {
    result_.insert(cpus.begin(), cpus.end());
    details_ = KeepOnly(details_, Minus(Cpus(details_), result_));
    needed_ -= static_cast<int>(cpus.size());
  }
  bool Needs(int n) const { return needed_ >= n; }
  bool Satisfied() const { return needed_ < 1; }
  bool Failed() const { return needed_ > static_cast<int>(details_.size()); }
  const CpuSet& result() const { return result_; }
  const Details& details() const { return details_; }

  std::vector<int> FreeSockets() const {
    std::set<int> sockets = Distinct(details_, &CpuInfo::socket);
    CpuSet cpus = Cpus(details_);
    std::vector<int> out;
    std::set_intersection(sockets.begin(), sockets.end(), cpus.begin(), cpus.end(), std::back_inserter(out));
    return out;
  }

  std::vector<int> FreeCores() const {
    CpuSet cpus = Cpus(details_);
    auto cores_of = [&](int s) { return Distinct(details_, &CpuInfo::core, s); };
    std::set<int> socket_set = Distinct(details_, &CpuInfo::socket);
    std::vector<int> sockets(socket_set.begin(), socket_set.end());
    InsertionSort(sockets, [&](int i, int j) {
      return IntersectSize(cores_of(i), cpus) < IntersectSize(cores_of(j), cpus) || i < j;
    });
    std::vector<int> out;
    for (int s : sockets) {
      std::set<int> cores = cores_of(s);
      std::set_intersection(cores.begin(), cores.end(), cpus.begin(), cpus.end(), std::back_inserter(out));
    }
    return out;
  }

  std::vector<int> FreeCpus() const {
    std::set<int> core_set = Distinct(details_, &CpuInfo::core);
    std::vector<int> cores(core_set.begin(), core_set.end());
    auto socket_of = [&](int core) { return topo_.at(*CpusInCore(topo_, core).begin()).socket; };
    InsertionSort(cores, [&](int i, int j) {
      int si = socket_of(i), sj = socket_of(j);
      size_t coloc_i = IntersectSize(CpusInSocket(topo_, si), result_);
      size_t coloc_j = IntersectSize(CpusInSocket(topo_, sj), result_);
      size_t free_i = CpusInSocket(details_, si).size(), free_j = CpusInSocket(details_, sj).size();
      size_t core_i = CpusInCore(details_, i).size(), core_j = CpusInCore(details_, j).size();
      return coloc_i > coloc_j || free_i < free_j || core_i < core_j || si < sj || i < j;
    });
    std::vector<int> out;
    for (int core : cores)
      for (int cpu : CpusInCore(details_, core)) out.push_back(cpu);
    return out;
  }

 private:
  const Details& topo_;
  Details details_;
  int needed_;
  CpuSet result_;
};

int PhysicalCores(const Details& d) {
  std::set<std::pair<int, int>> cores;
  for (const auto& [cpu, info] : d) cores.emplace(info.socket, info.core);
  return static_cast<int>(cores.size());
}

// What the CPU manager takes for whole CPUs: the count, 0 for a fraction.
int WholeCpus(int64_t request_milli) {
  return request_milli > 0 && request_milli % 1000 == 0 ? static_cast<int>(request_milli / 1000) : 0;
}

// The CPUs the kubelet reserves (resReserved.cpu, rounded up), taken by topology.
CpuSet Reserved(const NumaTopology& topo) {
  if (topo.reserved_milli_cpu < 0) return {};
  int n = static_cast<int>((topo.reserved_milli_cpu + 999) / 1000);
  return TakeByTopology(topo.cpus, Cpus(topo.cpus), n).value_or(CpuSet());
}

// Calls `visit` with every non-empty subset of `ids`, by size, each size in
// lexicographic order (the kubelet's bitmask.IterateBitMasks).
template <typename Visit>
void ForEachSubset(const std::vector<int>& ids, Visit visit) {
  std::vector<int> chosen;
  auto recurse = [&](auto& self, size_t from, size_t size) -> void {
    if (chosen.size() == size) {
      visit(MaskOf(chosen));
      return;
    }
    for (size_t i = from; i < ids.size(); ++i) {
      chosen.push_back(ids[i]);
      self(self, i + 1, size);
      chosen.pop_back();
    }
  };
  for (size_t size = 1; size <= ids.size(); ++size) recurse(recurse, 0, size);
}

using HintLists = std::vector<std::vector<NumaHint>>;

// Volcano's filterProvidersHints: one list per provider resource.
HintLists Flatten(const std::vector<ProviderHints>& providers) {
  HintLists out;
  for (const ProviderHints& p : providers) {
    if (p.empty()) out.push_back({{std::nullopt, true}});
    for (const auto& [resource, hints] : p) {
      if (!hints) {
        out.push_back({{std::nullopt, true}});
      } else if (hints->empty()) {
        out.push_back({{std::nullopt, false}});
      } else {
        out.push_back(*hints);
      }
    }
  }
  return out;
}

HintLists SingleNumaOnly(const HintLists& lists) {
  HintLists out;
  for (const auto& list : lists) {
    std::vector<NumaHint> kept;
    for (const NumaHint& h : list)
      if (h.preferred && (!h.affinity || Count(*h.affinity) == 1)) kept.push_back(h);
    out.push_back(std::move(kept));
  }
  return out;
}

// Volcano's mergeFilteredHints: over every choice of one hint per list (the
// last list varying fastest), the AND of their affinities; a preferred
// merge beats a non-preferred one, then the narrower wins.
NumaHint Merge(const std::vector<int>& numa_nodes, const HintLists& lists) {
  const uint64_t all = MaskOf(numa_nodes);
  NumaHint best{all, false};
  if (std::any_of(lists.begin(), lists.end(), [](const auto& l) { return l.empty(); })) return best;
  std::vector<size_t> pick(lists.size(), 0);
  while (true) {
    uint64_t merged = all;
    bool preferred = true;
    for (size_t i = 0; i < lists.size(); ++i) {
      const NumaHint& h = lists[i][pick[i]];
      merged &= h.affinity.value_or(all);
      preferred = preferred && h.preferred;
    }
    bool better = preferred != best.preferred ? preferred : Narrower(merged, *best.affinity);
    if (merged != 0 && better) best = {merged, preferred};
    size_t i = lists.size();
    while (i > 0 && ++pick[i - 1] == lists[i - 1].size()) pick[--i] = 0;
    if (i == 0) break;
  }
  return best;
}

}  // namespace

std::pair<NumaHint, bool> TopologyPolicyPredicate(std::string_view policy, const std::vector<int>& numa_nodes,
                                                  const std::vector<ProviderHints>& providers) {
  if (policy == "best-effort") return {Merge(numa_nodes, Flatten(providers)), true};
  if (policy == "restricted") {
    NumaHint best = Merge(numa_nodes, Flatten(providers));
    return {best, best.preferred};
  }
  if (policy == "single-numa-node") {
    NumaHint best = Merge(numa_nodes, SingleNumaOnly(Flatten(providers)));
    return {best, best.preferred};
  }
  return {NumaHint{}, true};
}

std::optional<std::vector<NumaHint>> CpuTopologyHints(int64_t request_milli, const NumaTopology& topo,
                                                      const std::optional<CpuSet>& free) {
  int request = WholeCpus(request_milli);
  if (request == 0 || !free) return std::nullopt;
  CpuSet available = Minus(*free, Reserved(topo));
  std::vector<int> nodes = NumaNodesOf(topo.cpus);
  int narrowest = static_cast<int>(nodes.size());
  std::vector<NumaHint> hints;
  ForEachSubset(nodes, [&](uint64_t mask) {
    int in_mask = static_cast<int>(CpusWhere(topo.cpus, [mask](const CpuInfo& i) { return InMask(mask, i.numa); }).size());
    if (in_mask >= request && Count(mask) < narrowest) narrowest = Count(mask);
    int matching = static_cast<int>(
        std::count_if(available.begin(), available.end(), [&](int c) { return InMask(mask, NumaOf(topo.cpus, c)); }));
    if (matching >= request) hints.push_back({mask, false});
  });
  for (NumaHint& h : hints) h.preferred = Count(*h.affinity) == narrowest;
  return hints;
}

CpuSet AssignCpus(int64_t request_milli, const NumaHint& best, const NumaTopology& topo, const CpuSet& free) {
  int request = WholeCpus(request_milli);
  CpuSet available = Minus(free, Reserved(topo));
  CpuSet result;
  if (best.affinity) {
    CpuSet aligned = CpusWhere(topo.cpus, [&](const CpuInfo& i) { return InMask(*best.affinity, i.numa); });
    std::erase_if(aligned, [&](int c) { return !available.contains(c); });
    int n = std::min(request, static_cast<int>(aligned.size()));
    std::optional<CpuSet> taken = TakeByTopology(topo.cpus, aligned, n);
    if (!taken) return {};
    result = std::move(*taken);
  }
  std::optional<CpuSet> rest =
      TakeByTopology(topo.cpus, Minus(available, result), request - static_cast<int>(result.size()));
  if (!rest) return {};
  result.insert(rest->begin(), rest->end());
  return result;
}

std::optional<CpuSet> TakeByTopology(const std::map<int, CpuInfo>& topo, const CpuSet& available, int n) {
  Accumulator acc(topo, available, n);
  if (acc.Satisfied()) return acc.result();
  if (acc.Failed()) return std::nullopt;
  int cpus = static_cast<int>(topo.size());
  int sockets = static_cast<int>(Distinct(topo, &CpuInfo::socket).size());
  int cores = PhysicalCores(topo);
  int per_socket = sockets == 0 ? 0 : cpus / sockets;
  int per_core = cores == 0 ? 0 : cpus / cores;
  if (acc.Needs(per_socket)) {
    for (int s : acc.FreeSockets()) {
      acc.Take(CpusInSocket(acc.details(), s));
      if (acc.Satisfied()) return acc.result();
      if (!acc.Needs(per_socket)) break;
    }
  }
  if (acc.Needs(per_core)) {
    for (int c : acc.FreeCores()) {
      acc.Take(CpusInCore(acc.details(), c));
      if (acc.Satisfied()) return acc.result();
      if (!acc.Needs(per_core)) break;
    }
  }
  for (int c : acc.FreeCpus()) {
    if (acc.Needs(1)) acc.Take({c});
    if (acc.Satisfied()) return acc.result();
  }
  return std::nullopt;
}

std::vector<int> NumaNodesOf(const std::map<int, CpuInfo>& topo) {
  std::set<int> nodes = Distinct(topo, &CpuInfo::numa);
  return {nodes.begin(), nodes.end()};
}

int NumaNodeCount(const CpuSet& cpus, const std::map<int, CpuInfo>& topo) {
  uint64_t mask = 0;
  for (int c : cpus) mask |= uint64_t{1} << NumaOf(topo, c);
  return Count(mask);
}

}  // namespace volcanic
