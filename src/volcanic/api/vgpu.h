// NVIDIA vGPU sharing as Volcano's deviceshare plugin models it (HAMi
// cards; pkg/scheduler/api/devices/nvidia/vgpu): each card of a node is
// shared by pods up to its number of sharers, its memory and 100 cores.
//
// - A node registers its cards in the annotation volcano.sh/node-vgpu-register,
//   "UUID,number,memoryMiB,type,health,mode:" per card, and only counts when
//   its allocatable has volcano.sh/vgpu-number, -cores and -memory above 0.
// - A container asks with limits volcano.sh/vgpu-number (cards, each a
//   different one), volcano.sh/vgpu-memory (MiB per card; without it, the
//   whole card's memory) and volcano.sh/vgpu-cores (percent per card, 100 =
//   the card alone).
// - The cards a pod got are in its annotation volcano.sh/vgpu-ids-new,
//   "UUID,type,memory,cores:" per card, containers joined by ";".
//
// Not modelled: MIG geometries (a node in mig mode registers no cards), the
// volcano.sh/vgpu-podgroup-policy spread, node locks, and the devices
// config's memory-percentage resource.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "volcanic/api/json_fields.h"
#include "volcanic/api/placement.h"
#include "volcanic/api/resource.h"

namespace volcanic {

inline constexpr char kVgpuRegisterAnnotation[] = "volcano.sh/node-vgpu-register";
inline constexpr char kVgpuIdsAnnotation[] = "volcano.sh/vgpu-ids-new";
inline constexpr char kVgpuNumber[] = "volcano.sh/vgpu-number";
inline constexpr char kVgpuMemory[] = "volcano.sh/vgpu-memory";
inline constexpr char kVgpuCores[] = "volcano.sh/vgpu-cores";

// What the pods on a card use of it.
struct GpuUse {
  int32_t num = 0, cores = 0;
  int64_t mem = 0;  // MiB
  bool operator==(const GpuUse&) const = default;
};

struct GpuCard {
  std::string uuid, type;
  int32_t number = 0;   // most pods sharing it
  int64_t memory = 0;   // MiB
  GpuUse used;
  bool operator==(const GpuCard&) const = default;
};

// A node's registered cards with what its pods use of each.
struct NodeGpus {
  std::vector<GpuCard> cards;
  std::string mode;  // "hami-core"
  bool operator==(const NodeGpus&) const = default;
};

// One container's ask (ExtractResourceRequest in devices/util.go).
struct GpuRequest {
  int32_t count = 1;
  int64_t memory = 0;           // MiB per card
  int32_t memory_percent = 101;  // 101: none asked; 100 when neither is given
  int32_t cores = 0;
  bool operator==(const GpuRequest&) const = default;
};

// A share of one card given to one container.
struct GpuGrant {
  std::string uuid, type;
  int64_t memory = 0;
  int32_t cores = 0;
  bool operator==(const GpuGrant&) const = default;
};
using GpuGrants = std::vector<std::vector<GpuGrant>>;  // per container

// How cards are tried and scored (deviceshare.SchedulePolicy).
enum class GpuPolicy : uint8_t { kDefault, kBinpack, kSpread };

// The containers' asks, from spec.containers[*].resources; empty when no
// container asks for vgpu-number or vgpu-memory.
absl::StatusOr<std::vector<GpuRequest>> ParseGpuRequests(const json& spec, const Fields& f);

// What of a pod's vGPU ask a fit depends on (the asks and its GpuAnnotations),
// for its class key: pods of equal keys fit alike.
std::string GpuClassKey(const std::vector<GpuRequest>& requests, const Labels& gpu_annotations);

// The cards a node registers (none when it does not, or in mig mode), with
// nothing used.
NodeGpus ParseNodeGpus(const Labels& annotations, const Resource& allocatable);

// A pod's vgpu-ids-new annotation; malformed entries are skipped, as Volcano does.
GpuGrants ParseGpuGrants(absl::string_view annotation);
// The cards a pod's annotations say it holds (none without vgpu-ids-new).
GpuGrants GrantsOf(const Labels& pod_annotations);
std::string EncodeGpuGrants(const GpuGrants& grants);

// Adds (sign +1) or removes (-1) a pod's grants from the cards they name.
void AccountGpuGrants(NodeGpus& gpus, const GpuGrants& grants, int sign);

// The cards each container would get on `gpus` now, by Volcano's rules
// (checkNodeGPUSharingPredicateAndScore), and the node's device score (the
// sum of the chosen cards' GPUScore after the pod is added); an error when
// the pod does not fit. `pod_annotations` carry the type and UUID filters.
// With `only_card` >= 0, that card is the only one tried.
struct GpuFit {
  GpuGrants grants;
  double score = 0;
};
absl::StatusOr<GpuFit> FitGpus(const std::vector<GpuRequest>& requests, const Labels& pod_annotations,
                               const NodeGpus& gpus, GpuPolicy policy, int only_card = -1);
// The pod annotations a fit reads: the vGPU mode and the card type and UUID
// filters (most pods have none). A fit is tried on many nodes: it is given
// these rather than every annotation of the pod.
Labels GpuAnnotations(const Labels& pod_annotations);
// FitGpus(...).ok(), without building the answer (a predicate's question).
bool GpusFit(const std::vector<GpuRequest>& requests, const Labels& pod_annotations, const NodeGpus& gpus,
             GpuPolicy policy);

// The annotations Volcano's Allocate puts on the pod's binding (merged into
// the pod by the API server): its cards, node and times (Unix seconds).
Labels GpuBindAnnotations(const GpuGrants& grants, const std::string& node, int64_t now_s);

}  // namespace volcanic
