#include "volcanic/api/vgpu.h"

#include <algorithm>
#include <numeric>
#include <string_view>

#include "absl/container/inlined_vector.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "volcanic/api/status_macros.h"

namespace volcanic {
namespace {

// Strings, not literals: a fit looks them up in the pod's GpuAnnotations once
// per node it tries, and a literal would be copied into a string each time.
const std::string kModeAnnotation = "volcano.sh/vgpu-mode";
const std::string kUseTypeAnnotation = "nvidia.com/use-gputype";
const std::string kNoUseTypeAnnotation = "nvidia.com/nouse-gputype";
const std::string kUseUuidAnnotation = "volcano.sh/vgpu-use-gpuuuid";
const std::string kNoUseUuidAnnotation = "volcano.sh/vgpu-nouse-gpuuuid";
const std::string* const kFilterAnnotations[] = {&kUseTypeAnnotation, &kNoUseTypeAnnotation, &kUseUuidAnnotation,
                                                 &kNoUseUuidAnnotation};
constexpr char kNvidia[] = "NVIDIA";
constexpr char kHamiCore[] = "hami-core";
constexpr double kScoreMultiplier = 100;  // binpackMultiplier, spreadMultiplier

// A quantity under resources.limits, else resources.requests (absent: nullopt).
absl::StatusOr<std::optional<int64_t>> Quantity(const json& resources, const Fields& f, const std::string& path,
                                                const char* name, bool limits_only) {
  for (const char* list : {"limits", "requests"}) {
    if (limits_only && std::string(list) == "requests") break;
    ASSIGN_OR_RETURN(const json* l, f.Find(resources, list, path));
    if (!l || !l->is_object()) continue;
    auto it = l->find(std::string_view(name));  // a view: no key string built per pod
    if (it == l->end()) continue;
    std::string field = absl::StrCat(path, ".", list, ".", name);
    auto text = QuantityText(*it);
    if (!text.ok()) return f.Error(field, std::string(text.status().message()));
    auto v = ParseQuantity(*text);
    if (!v.ok() || *v < 0 || *v > INT32_MAX) return f.Error(field, "must be a whole number of at most 2^31-1");
    return *v;
  }
  return std::optional<int64_t>();
}

bool ContainsFold(absl::string_view haystack, absl::string_view needle) {
  return absl::StrContains(absl::AsciiStrToUpper(haystack), absl::AsciiStrToUpper(needle));
}

// nvidia.com/use-gputype and nouse-gputype (checkGPUtype).
bool TypeAllowed(const Labels& annotations, const std::string& type) {
  auto listed = [&](const std::string& list) {
    for (absl::string_view t : absl::StrSplit(list, ','))
      if (ContainsFold(type, t)) return true;
    return false;
  };
  if (auto use = annotations.find(kUseTypeAnnotation); use != annotations.end()) return listed(use->second);
  if (auto nouse = annotations.find(kNoUseTypeAnnotation); nouse != annotations.end()) return !listed(nouse->second);
  return true;
}

std::vector<std::string> UuidList(const Labels& annotations, const std::string& key) {
  std::vector<std::string> out;
  auto it = annotations.find(key);
  if (it == annotations.end()) return out;
  for (absl::string_view id : absl::StrSplit(it->second, ',')) {
    id = absl::StripAsciiWhitespace(id);
    if (!id.empty()) out.emplace_back(id);
  }
  return out;
}

struct UuidFilter {
  std::vector<std::string> allow, deny;
  bool Matches(const std::string& id) const {
    auto has = [&](const std::vector<std::string>& l) { return std::find(l.begin(), l.end(), id) != l.end(); };
    if (!allow.empty() && !has(allow)) return false;
    return !has(deny);
  }
};

// The order cards are tried in (sortedDeviceIndicesByPolicy), by what they use now.
// Inline for the few cards of a node: a fit is tried once per node and pod class.
using CardUse = absl::InlinedVector<GpuUse, 8>;
using CardIndexes = absl::InlinedVector<int, 8>;

CardIndexes CardOrder(const CardUse& use, GpuPolicy policy) {
  CardIndexes idx(use.size());
  std::iota(idx.begin(), idx.end(), 0);
  if (policy == GpuPolicy::kDefault) {
    std::reverse(idx.begin(), idx.end());
  } else if (policy == GpuPolicy::kBinpack) {
    std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return use[a].mem > use[b].mem; });
  } else {
    std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return use[a].num < use[b].num; });
  }
  return idx;
}

double CardScore(const GpuCard& c, const GpuUse& u, GpuPolicy policy) {
  if (policy == GpuPolicy::kBinpack) return kScoreMultiplier * static_cast<double>(u.mem) / static_cast<double>(c.memory);
  if (policy == GpuPolicy::kSpread) return u.num == 0 ? kScoreMultiplier : 0;
  return 0;
}

// Whether a container asking `r` (memory `mem` on this card) may share card c, using u.
bool CardFits(const GpuCard& c, const GpuUse& u, const GpuRequest& r, int64_t mem) {
  if (c.number <= u.num) return false;
  if (c.memory - u.mem < mem) return false;
  if (u.cores + r.cores > 100) return false;
  if (r.cores == 100 && u.num > 0) return false;  // 100 cores: the card alone
  if (u.cores == 100 && r.cores == 0) return false;
  return absl::StrContains(c.type, kNvidia);
}

void Add(GpuUse& u, int64_t mem, int32_t cores, int sign) {
  u.num += sign;
  u.mem += sign * mem;
  u.cores += sign * cores;
}

bool HasFilter(const Labels& annotations) {
  for (const std::string* k : kFilterAnnotations)
    if (annotations.contains(*k)) return true;
  return false;
}

enum class Fit : uint8_t { kFits, kMode, kTooFewCards, kNoRoom };

// checkNodeGPUSharingPredicateAndScore, building `out` when given. Works on a
// copy of the cards' use: later containers see the cards earlier ones took.
Fit TryFit(const std::vector<GpuRequest>& requests, const Labels& annotations, const NodeGpus& gpus, GpuPolicy policy,
           int only_card, GpuFit* out) {
  if (auto mode = annotations.find(kModeAnnotation); mode != annotations.end() && mode->second != gpus.mode)
    return Fit::kMode;
  bool filtered = HasFilter(annotations);
  UuidFilter filter;
  if (filtered) filter = {UuidList(annotations, kUseUuidAnnotation), UuidList(annotations, kNoUseUuidAnnotation)};
  CardUse use;
  use.reserve(gpus.cards.size());
  for (const GpuCard& c : gpus.cards) use.push_back(c.used);
  for (const GpuRequest& r : requests) {
    if (r.count > static_cast<int32_t>(use.size())) return Fit::kTooFewCards;
    std::vector<GpuGrant>* granted = out ? &out->grants.emplace_back() : nullptr;
    int32_t wanted = r.count;
    for (int i : only_card >= 0 ? CardIndexes{only_card} : CardOrder(use, policy)) {
      const GpuCard& c = gpus.cards[i];
      int64_t mem = r.memory_percent != 101 ? static_cast<int64_t>(static_cast<double>(c.memory) * r.memory_percent / 100.0)
                                            : r.memory;
      if (!CardFits(c, use[i], r, mem)) continue;
      if (filtered && (!filter.Matches(c.uuid) || !TypeAllowed(annotations, c.type))) continue;
      Add(use[i], mem, r.cores, +1);
      if (wanted > 0) {
        --wanted;
        if (out) {
          granted->push_back({c.uuid, kNvidia, mem, r.cores});
          out->score += CardScore(c, use[i], policy);
        }
      }
      if (wanted == 0) break;
    }
    if (wanted > 0) return Fit::kNoRoom;
  }
  return Fit::kFits;
}

}  // namespace

absl::StatusOr<std::vector<GpuRequest>> ParseGpuRequests(const json& spec, const Fields& f) {
  std::vector<GpuRequest> out;
  ASSIGN_OR_RETURN(const json* containers, f.Array(spec, "containers", "spec"));
  for (size_t i = 0; i < containers->size(); ++i) {
    std::string path = absl::StrCat("spec.containers[", i, "]");
    ASSIGN_OR_RETURN(const json* res, f.Find((*containers)[i], "resources", path));
    if (!res) continue;
    path += ".resources";
    ASSIGN_OR_RETURN(auto number, Quantity(*res, f, path, kVgpuNumber, true));
    ASSIGN_OR_RETURN(auto mem_limit, Quantity(*res, f, path, kVgpuMemory, true));
    if (!number && !mem_limit) continue;
    GpuRequest r;
    r.count = number ? static_cast<int32_t>(*number) : 1;
    ASSIGN_OR_RETURN(auto memory, Quantity(*res, f, path, kVgpuMemory, false));
    ASSIGN_OR_RETURN(auto cores, Quantity(*res, f, path, kVgpuCores, false));
    r.memory = memory.value_or(0);
    if (r.memory == 0) r.memory_percent = 100;
    r.cores = static_cast<int32_t>(cores.value_or(0));
    out.push_back(r);
  }
  return out;
}

Labels GpuAnnotations(const Labels& pod_annotations) {
  Labels out;
  auto keep = [&](const std::string& name) {
    if (auto it = pod_annotations.find(name); it != pod_annotations.end()) out.insert(*it);
  };
  keep(kModeAnnotation);
  for (const std::string* name : kFilterAnnotations) keep(*name);
  return out;
}

std::string GpuClassKey(const std::vector<GpuRequest>& requests, const Labels& gpu_annotations) {
  std::string key;
  for (const GpuRequest& r : requests) absl::StrAppend(&key, r.count, ",", r.memory, ",", r.memory_percent, ",", r.cores, ";");
  for (const auto& [name, value] : gpu_annotations) absl::StrAppend(&key, name, "=", value, ";");
  return key;
}

NodeGpus ParseNodeGpus(const Labels& annotations, const Resource& allocatable) {
  NodeGpus out;
  auto reg = annotations.find(kVgpuRegisterAnnotation);
  if (reg == annotations.end() || !absl::StrContains(reg->second, ':')) return out;
  for (const char* name : {kVgpuNumber, kVgpuCores, kVgpuMemory}) {
    ResourceId id = ResourceNames::Find(name);
    if (id < 0 || allocatable.Get(id) <= 0) return out;
  }
  out.mode = kHamiCore;
  for (absl::string_view entry : absl::StrSplit(reg->second, ':')) {
    if (!absl::StrContains(entry, ',')) continue;
    std::vector<std::string> items = absl::StrSplit(entry, ',');
    if (items.size() < 6) return {};  // Volcano drops the whole registration
    GpuCard c;
    c.uuid = items[0];
    c.type = items[3];
    if (!absl::SimpleAtoi(items[1], &c.number)) c.number = 0;
    if (!absl::SimpleAtoi(items[2], &c.memory)) c.memory = 0;
    if (items[5] == "mig") return {};  // MIG geometries are not modelled
    out.cards.push_back(std::move(c));
  }
  return out;
}

GpuGrants ParseGpuGrants(absl::string_view annotation) {
  GpuGrants out;
  if (annotation.empty()) return out;
  for (absl::string_view container : absl::StrSplit(annotation, ';')) {
    std::vector<GpuGrant>& cards = out.emplace_back();
    for (absl::string_view entry : absl::StrSplit(container, ':')) {
      std::vector<absl::string_view> items = absl::StrSplit(entry, ',');
      GpuGrant g;
      if (items.size() < 4 || !absl::SimpleAtoi(items[2], &g.memory) || !absl::SimpleAtoi(items[3], &g.cores))
        continue;
      g.uuid = std::string(items[0]);
      g.type = std::string(items[1]);
      cards.push_back(std::move(g));
    }
  }
  return out;
}

GpuGrants GrantsOf(const Labels& pod_annotations) {
  auto ids = pod_annotations.find(kVgpuIdsAnnotation);
  return ids == pod_annotations.end() ? GpuGrants() : ParseGpuGrants(ids->second);
}

std::string EncodeGpuGrants(const GpuGrants& grants) {
  return absl::StrJoin(grants, ";", [](std::string* out, const std::vector<GpuGrant>& cards) {
    for (const GpuGrant& g : cards) absl::StrAppend(out, g.uuid, ",", g.type, ",", g.memory, ",", g.cores, ":");
  });
}

Labels GpuBindAnnotations(const GpuGrants& grants, const std::string& node, int64_t now_s) {
  std::string ids = EncodeGpuGrants(grants), now = absl::StrCat(now_s);
  return {{kVgpuIdsAnnotation, ids},          {"volcano.sh/devices-to-allocate", ids},
          {"volcano.sh/vgpu-node", node},      {"volcano.sh/vgpu-time", now},
          {"volcano.sh/bind-time", now},       {"volcano.sh/bind-phase", "allocating"}};
}

void AccountGpuGrants(NodeGpus& gpus, const GpuGrants& grants, int sign) {
  for (const auto& cards : grants)
    for (const GpuGrant& g : cards)
      for (GpuCard& c : gpus.cards)
        if (absl::StrContains(g.uuid, c.uuid)) {
          Add(c.used, g.memory, g.cores, sign);
          break;
        }
}

absl::StatusOr<GpuFit> FitGpus(const std::vector<GpuRequest>& requests, const Labels& pod_annotations,
                               const NodeGpus& gpus, GpuPolicy policy, int only_card) {
  GpuFit fit;
  if (requests.empty()) return fit;
  switch (TryFit(requests, pod_annotations, gpus, policy, only_card, &fit)) {
    case Fit::kFits:
      return fit;
    case Fit::kMode:
      return absl::FailedPreconditionError(absl::StrCat("pod required sharing mode ",
                                                        pod_annotations.at(kModeAnnotation),
                                                        " is not the same as the node mode ", gpus.mode));
    case Fit::kTooFewCards:
      return absl::FailedPreconditionError("no enough gpu cards");
    case Fit::kNoRoom:
      break;
  }
  return absl::FailedPreconditionError("not enough gpu fitted on this node");
}

bool GpusFit(const std::vector<GpuRequest>& requests, const Labels& pod_annotations, const NodeGpus& gpus,
             GpuPolicy policy) {
  return requests.empty() || TryFit(requests, pod_annotations, gpus, policy, -1, nullptr) == Fit::kFits;
}

}  // namespace volcanic
