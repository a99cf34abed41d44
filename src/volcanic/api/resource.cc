#include "volcanic/api/resource.h"

#include <algorithm>
#include <mutex>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "volcanic/api/quantity.h"

namespace volcanic {
namespace {

constexpr ResourceId kBuiltinCount = 4;  // cpu, memory, ephemeral-storage, pods

bool BytesName(absl::string_view n) {
  return n == "memory" || absl::StartsWith(n, "hugepages-") || absl::EndsWith(n, "storage");
}

struct NameSlot {
  std::string name;
  int64_t refs = 0;
  bool pinned = false;  // built-in or interned by code: never released
  bool bytes = false;
  bool in_use = false;
};

struct NameTable {
  std::mutex mu;
  std::vector<NameSlot> slots;  // by id
  absl::flat_hash_map<std::string, ResourceId> ids;
  absl::btree_set<ResourceId> free;  // unused ids below slots.size(), lowest reused first
  NameTable() {
    for (const char* n : {"cpu", "memory", "ephemeral-storage", "pods"}) Add(n)->pinned = true;
  }
  // The slot of `name`, added (with no references) when missing. Needs mu.
  NameSlot* Add(absl::string_view name, ResourceId* id_out = nullptr) {
    auto it = ids.find(name);
    ResourceId id;
    if (it != ids.end()) {
      id = it->second;
    } else if (!free.empty()) {
      id = *free.begin();
      free.erase(free.begin());
    } else {
      id = static_cast<ResourceId>(slots.size());
      slots.emplace_back();
    }
    NameSlot& slot = slots[id];
    if (!slot.in_use) {
      slot = NameSlot{std::string(name), 0, false, BytesName(name), true};
      ids.emplace(slot.name, id);
    }
    if (id_out) *id_out = id;
    return &slot;
  }
  // Frees the id of an unpinned name nobody holds; trailing free ids are
  // dropped so Width() shrinks back. Needs mu.
  void Drop(ResourceId id) {
    NameSlot& slot = slots[id];
    ids.erase(slot.name);
    slot = NameSlot{};
    free.insert(id);
    while (!slots.empty() && !slots.back().in_use) {
      free.erase(static_cast<ResourceId>(slots.size() - 1));
      slots.pop_back();
    }
  }
};

NameTable& Table() {
  static NameTable* table = new NameTable();  // never destroyed: used at exit
  return *table;
}

int64_t Saturate(__int128 v) {
  if (v >= Resource::kInfinite) return Resource::kInfinite;
  if (v <= -Resource::kInfinite) return -Resource::kInfinite;
  return static_cast<int64_t>(v);
}

int64_t AddSat(int64_t a, int64_t b) {
  if (a >= Resource::kInfinite || b >= Resource::kInfinite) return Resource::kInfinite;
  return Saturate(static_cast<__int128>(a) + b);
}

int64_t SubSat(int64_t a, int64_t b) {
  if (a >= Resource::kInfinite) return Resource::kInfinite;
  return Saturate(static_cast<__int128>(a) - b);
}

}  // namespace

ResourceId ResourceNames::Intern(absl::string_view name) {
  NameTable& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  ResourceId id;
  t.Add(name, &id)->pinned = true;
  return id;
}

ResourceId ResourceNames::Acquire(absl::string_view name) {
  NameTable& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  ResourceId id;
  ++t.Add(name, &id)->refs;
  return id;
}

void ResourceNames::AddRef(ResourceId id) {
  NameTable& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  ++t.slots.at(id).refs;
}

void ResourceNames::Release(ResourceId id) {
  NameTable& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  NameSlot& slot = t.slots.at(id);
  if (--slot.refs == 0 && !slot.pinned) t.Drop(id);
}

ResourceId ResourceNames::Find(absl::string_view name) {
  NameTable& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.ids.find(name);
  return it == t.ids.end() ? -1 : it->second;
}

std::string ResourceNames::Name(ResourceId id) {
  NameTable& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  return t.slots.at(id).name;
}

bool ResourceNames::IsBytes(ResourceId id) {
  if (id == kMemory || id == kEphemeralStorage) return true;
  if (id == kCpu || id == kPods) return false;
  NameTable& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  return t.slots.at(id).bytes;
}

int ResourceNames::Count() {
  NameTable& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  return static_cast<int>(t.ids.size());
}

int ResourceNames::Width() {
  NameTable& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  return static_cast<int>(t.slots.size());
}

ResourceNameRefs::ResourceNameRefs(const ResourceNameRefs& o) : ids_(o.ids_) {
  for (ResourceId id : ids_) ResourceNames::AddRef(id);
}

ResourceNameRefs::~ResourceNameRefs() {
  for (ResourceId id : ids_) ResourceNames::Release(id);
}

ResourceId ResourceNameRefs::Hold(absl::string_view name) {
  // The common names without the table's lock: they are never released.
  if (name == "cpu") return kCpu;
  if (name == "memory") return kMemory;
  ResourceId id = ResourceNames::Acquire(name);
  if (id < kBuiltinCount || std::find(ids_.begin(), ids_.end(), id) != ids_.end()) {
    ResourceNames::Release(id);  // held already, or never released anyway
  } else {
    ids_.push_back(id);
  }
  return id;
}

void Resource::Set(ResourceId id, int64_t value) {
  if (id >= Size()) v_.resize(id + 1, fill_);
  v_[id] = value;
}

// Requests and usage (fill 0, finite values) take the plain loop; limits
// (infinite fill or values) take the saturating one. This runs on every
// placement, several times.
template <bool kAdd>
void Combine(Resource::Dims& v, int64_t& fill, const Resource& o, int o_size, int64_t o_fill,
             const int64_t* o_data) {
  if (static_cast<int>(v.size()) < o_size) v.resize(o_size, fill);
  int64_t* d = v.data();
  if (fill == 0 && o_fill == 0) {
    for (int i = 0; i < o_size; ++i) {
      if (o_data[i] >= Resource::kInfinite || d[i] >= Resource::kInfinite) {
        d[i] = kAdd ? AddSat(d[i], o_data[i]) : SubSat(d[i], o_data[i]);
      } else {
        d[i] += kAdd ? o_data[i] : -o_data[i];
      }
    }
    return;
  }
  for (int i = 0; i < static_cast<int>(v.size()); ++i) {
    int64_t x = o.Get(i);
    d[i] = kAdd ? AddSat(d[i], x) : SubSat(d[i], x);
  }
  fill = kAdd ? AddSat(fill, o_fill) : SubSat(fill, o_fill);
}

Resource& Resource::operator+=(const Resource& o) {
  Combine<true>(v_, fill_, o, o.Size(), o.fill_, o.v_.data());
  return *this;
}

Resource& Resource::operator-=(const Resource& o) {
  Combine<false>(v_, fill_, o, o.Size(), o.fill_, o.v_.data());
  return *this;
}

bool Resource::operator==(const Resource& o) const {
  int n = Span(o);
  for (int i = 0; i < n; ++i)
    if (Get(i) != o.Get(i)) return false;
  return fill_ == o.fill_;
}

bool Resource::LessEqual(const Resource& o) const {
  int n = Span(o);
  for (int i = 0; i < n; ++i)
    if (Get(i) > o.Get(i)) return false;
  return fill_ <= o.fill_;
}

bool Resource::IsEmpty() const {
  for (int i = 0; i < Size(); ++i)
    if (i != kPods && v_[i] > 0) return false;
  return true;
}

template <typename Op>
Resource Resource::PerDimension(const Resource& o, Op op) const {
  Resource r;
  int n = Span(o);
  r.fill_ = op(fill_, o.fill_);
  r.v_.resize(n, r.fill_);
  for (int i = 0; i < n; ++i) r.v_[i] = op(Get(i), o.Get(i));
  return r;
}

Resource Resource::Min(const Resource& o) const {
  return PerDimension(o, [](int64_t a, int64_t b) { return std::min(a, b); });
}

Resource Resource::Max(const Resource& o) const {
  return PerDimension(o, [](int64_t a, int64_t b) { return std::max(a, b); });
}

// Subtraction as operator-= does it, in one pass without a copy of this.
Resource Resource::SubFloorZero(const Resource& o) const {
  const bool finite_fills = fill_ == 0 && o.fill_ == 0;
  Resource r;
  const int an = Size(), bn = o.Size(), n = std::max(an, bn);
  r.v_.resize(n);
  int64_t* d = r.v_.data();
  const int64_t *ad = v_.data(), *bd = o.v_.data();
  for (int i = 0; i < n; ++i) {
    int64_t a = i < an ? ad[i] : fill_, b = i < bn ? bd[i] : o.fill_;
    d[i] = std::max<int64_t>(finite_fills && a < kInfinite && b < kInfinite ? a - b : SubSat(a, b), 0);
  }
  r.fill_ = finite_fills ? 0 : std::max<int64_t>(SubSat(fill_, o.fill_), 0);
  return r;
}

// With every fill 0 (the common case) a dimension past a vector's size reads
// as 0; the operands' storage is read through plain pointers, which the loop
// would otherwise re-derive per dimension (this vector's stores may alias).
Resource& Resource::AddExcess(const Resource& a, const Resource& b) {
  if (fill_ != 0 || a.fill_ != 0 || b.fill_ != 0) return *this += a.SubFloorZero(b);  // infinite fills: rare
  const int an = a.Size(), bn = b.Size(), n = std::max(an, bn);
  if (Size() < n) v_.resize(n, 0);
  int64_t* d = v_.data();
  const int64_t *ad = a.v_.data(), *bd = b.v_.data();
  for (int i = 0; i < n; ++i) {
    int64_t x = i < an ? ad[i] : 0, y = i < bn ? bd[i] : 0;
    int64_t e = std::max<int64_t>(x < kInfinite && y < kInfinite ? x - y : SubSat(x, y), 0);
    d[i] = e >= kInfinite || d[i] >= kInfinite ? AddSat(d[i], e) : d[i] + e;
  }
  return *this;
}

std::vector<std::pair<std::string, std::string>> Resource::ToQuantities() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (int i = 0; i < Size(); ++i) {
    if (v_[i] == 0 || v_[i] >= kInfinite) continue;
    out.emplace_back(ResourceNames::Name(i), ResourceNames::IsBytes(i)
                                                 ? FormatByteQuantity(v_[i])
                                                 : FormatMilliQuantity(v_[i]));
  }
  return out;
}

std::string Resource::DebugString() const {
  return absl::StrJoin(ToQuantities(), ", ", [](std::string* s, const auto& kv) {
    s->append(kv.first).append("=").append(kv.second);
  });
}

}  // namespace volcanic
