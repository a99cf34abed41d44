// Resource vectors over interned resource names.
//
// Promises: a Resource is a small vector of int64 indexed by a process-wide
// resource id: cpu is in millicores, memory-like resources (memory,
// ephemeral-storage, hugepages-*) in bytes, every other resource (pods,
// nvidia.com/gpu, ...) in milli-units so fractional quantities stay exact.
// Ids beyond the stored size read as the vector's fill: 0 for requests and
// usage, kInfinite for limits (a queue capability that omits a dimension does
// not bound it, as in Volcano's proportion and capacity plugins).
// Cost: arithmetic is O(number of distinct resource names), no allocation
// for up to ten dimensions (the four built-ins, a GPU and Volcano's three
// vGPU resources fit).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/string_view.h"

namespace volcanic {

using ResourceId = int;
inline constexpr ResourceId kCpu = 0;
inline constexpr ResourceId kMemory = 1;
inline constexpr ResourceId kEphemeralStorage = 2;
// Every pod requests one `pods` (as in Volcano), so a full node fails the
// resource check with "Insufficient pods".
inline constexpr ResourceId kPods = 3;

// The process-wide table of resource names. Thread-safe.
//
// A name read from an object is held by that object (ResourceNameRefs) and
// its id is reused once no live object holds it, so the table, and with it
// the width of every resource vector, follows the names in use, not every
// name ever seen. The four names above and names from code or configuration
// (Intern) are never released.
class ResourceNames {
 public:
  // Pins `name` for the life of the process: for names from code and
  // configuration only, never for names read from objects.
  static ResourceId Intern(absl::string_view name);
  static ResourceId Find(absl::string_view name);  // -1 for a name not in use
  static std::string Name(ResourceId id);
  static bool IsBytes(ResourceId id);  // measured in bytes rather than milli-units
  static int Count();  // names in use
  // Every id in use is below this: how wide a resource vector can get.
  static int Width();

 private:
  friend class ResourceNameRefs;
  static ResourceId Acquire(absl::string_view name);
  static void AddRef(ResourceId id);
  static void Release(ResourceId id);
};

// The resource names one object uses, each held once while the object lives.
// Copies hold the names again; destruction releases them.
class ResourceNameRefs {
 public:
  ResourceNameRefs() = default;
  ResourceNameRefs(const ResourceNameRefs& o);
  ResourceNameRefs(ResourceNameRefs&& o) noexcept : ids_(std::move(o.ids_)) { o.ids_.clear(); }
  ResourceNameRefs& operator=(ResourceNameRefs o) noexcept {
    std::swap(ids_, o.ids_);
    return *this;
  }
  ~ResourceNameRefs();

  // The id of `name`, held by this object from now on.
  ResourceId Hold(absl::string_view name);

 private:
  absl::InlinedVector<ResourceId, 2> ids_;  // distinct; the four built-ins are not listed
};

class Resource {
 public:
  static constexpr int64_t kInfinite = INT64_MAX / 4;
  using Dims = absl::InlinedVector<int64_t, 10>;

  Resource() = default;
  static Resource Infinite() {
    Resource r;
    r.fill_ = kInfinite;
    return r;
  }

  int64_t Get(ResourceId id) const {
    return id < static_cast<int>(v_.size()) ? v_.data()[id] : fill_;
  }
  void Set(ResourceId id, int64_t value);
  int Size() const { return static_cast<int>(v_.size()); }
  int64_t fill() const { return fill_; }  // what dimensions beyond Size() read as
  // Number of dimensions worth visiting when comparing with another vector.
  int Span(const Resource& o) const { return std::max(Size(), o.Size()); }

  Resource& operator+=(const Resource& o);
  Resource& operator-=(const Resource& o);
  friend Resource operator+(Resource a, const Resource& b) { return a += b; }
  friend Resource operator-(Resource a, const Resource& b) { return a -= b; }
  bool operator==(const Resource& o) const;

  // Every dimension <= the other's (Volcano's LessEqual with the Zero default
  // for requests; for limits the fill of `o` decides).
  bool LessEqual(const Resource& o) const;
  // Volcano's IsEmpty: a best-effort request (nothing but `pods`).
  bool IsEmpty() const;
  // Per-dimension min / max, keeping infinities.
  Resource Min(const Resource& o) const;
  Resource Max(const Resource& o) const;
  // max(this - o, 0) per dimension.
  Resource SubFloorZero(const Resource& o) const;
  // *this += a.SubFloorZero(b), in one pass without the temporary.
  Resource& AddExcess(const Resource& a, const Resource& b);

  // "cpu=1500m, memory=1Gi" style text, dimensions in id order, zeros skipped.
  std::string DebugString() const;
  // name -> canonical quantity text, zero dimensions skipped.
  std::vector<std::pair<std::string, std::string>> ToQuantities() const;

 private:
  template <typename Op>
  Resource PerDimension(const Resource& o, Op op) const;

  Dims v_;
  int64_t fill_ = 0;
};

// Volcano's helpers.Share: l/r, or 0/1 when r is 0.
inline double Share(int64_t l, int64_t r) {
  if (r == 0) return l == 0 ? 0.0 : 1.0;
  return static_cast<double>(l) / static_cast<double>(r);
}

// max over the dimensions `of` has (> 0) of Share(allocated, of).
inline double DominantShare(const Resource& allocated, const Resource& of) {
  double share = 0;
  for (int i = 0; i < of.Size(); ++i)
    if (of.Get(i) > 0) share = std::max(share, Share(allocated.Get(i), of.Get(i)));
  return share;
}

}  // namespace volcanic
