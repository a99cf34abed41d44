// Resource vectors: arithmetic, comparison semantics of Volcano's Resource.
#include <algorithm>
#include <catch2/catch.hpp>
#include <vector>

#include "volcanic/api/resource.h"

using volcanic::Resource;
using namespace volcanic;

namespace {
Resource R(int64_t cpu, int64_t mem) {
  Resource r;
  r.Set(kCpu, cpu);
  r.Set(kMemory, mem);
  return r;
}
}  // namespace

TEST_CASE("resource add and subtract per dimension") {
  Resource a = R(1000, 2048), b = R(500, 1024);
  REQUIRE((a + b) == R(1500, 3072));
  REQUIRE((a - b) == R(500, 1024));
  ResourceId gpu = ResourceNames::Intern("nvidia.com/gpu");
  b.Set(gpu, 2000);
  Resource c = a + b;
  REQUIRE(c.Get(gpu) == 2000);
  REQUIRE(a.Get(gpu) == 0);  // missing dimensions read as 0
}

TEST_CASE("LessEqual compares every dimension, missing as zero") {
  REQUIRE(R(1000, 1).LessEqual(R(1000, 1)));
  REQUIRE_FALSE(R(1001, 1).LessEqual(R(1000, 1)));
  Resource gpu_req = R(0, 0);
  gpu_req.Set(ResourceNames::Intern("nvidia.com/gpu"), 1000);
  REQUIRE_FALSE(gpu_req.LessEqual(R(8000, 1 << 30)));  // a node without GPUs
}

TEST_CASE("infinite limits bound only the dimensions they name") {
  Resource cap = Resource::Infinite();
  cap.Set(kCpu, 2000);
  REQUIRE(R(2000, int64_t{1} << 40).LessEqual(cap));
  REQUIRE_FALSE(R(2001, 0).LessEqual(cap));
  Resource big;
  big.Set(ResourceNames::Intern("example.com/foo"), 1'000'000);
  REQUIRE(big.LessEqual(cap));
  REQUIRE((cap + R(1, 1)).Get(kMemory) == Resource::kInfinite);  // saturates
  REQUIRE(R(5000, 5).Min(cap) == R(2000, 5).Min(Resource::Infinite()));
}

TEST_CASE("IsEmpty ignores the pods dimension (best-effort pods)") {
  Resource r;
  r.Set(kPods, 1000);
  REQUIRE(r.IsEmpty());
  r.Set(kCpu, 1);
  REQUIRE_FALSE(r.IsEmpty());
}

TEST_CASE("quantities print canonically by unit") {
  Resource r = R(1500, int64_t{1} << 30);
  r.Set(kPods, 3000);
  auto q = r.ToQuantities();
  REQUIRE(q == std::vector<std::pair<std::string, std::string>>{
                   {"cpu", "1500m"}, {"memory", "1Gi"}, {"pods", "3"}});
  REQUIRE(r.DebugString() == "cpu=1500m, memory=1Gi, pods=3");
}

TEST_CASE("SubFloorZero and Max") {
  REQUIRE(R(1000, 10).SubFloorZero(R(3000, 4)) == R(0, 6));
  REQUIRE(R(1000, 10).Max(R(3000, 4)) == R(3000, 10));
}

namespace {
// Infinities, negatives, infinite fills and a wider vector, in every pairing.
std::vector<Resource> EdgeCases() {
  const int64_t inf = Resource::kInfinite;
  const std::vector<int64_t> values = {0, 5, -7, inf - 1, inf, -inf + 1};
  std::vector<Resource> rs = {Resource(), Resource::Infinite()};
  for (int64_t c : values)
    for (int64_t m : values) rs.push_back(R(c, m));
  Resource wide = R(3, 4);
  wide.Set(ResourceNames::Intern("nvidia.com/gpu"), 2);
  rs.push_back(wide);
  return rs;
}
}  // namespace

// SubFloorZero is computed in one pass: it must agree with subtracting and
// clamping at zero, for infinities, negatives and infinite fills alike.
TEST_CASE("SubFloorZero is the difference clamped at zero") {
  const std::vector<Resource> rs = EdgeCases();
  for (const Resource& a : rs)
    for (const Resource& b : rs) {
      Resource expected = a - b;
      for (int i = 0; i < expected.Size(); ++i) expected.Set(i, std::max<int64_t>(expected.Get(i), 0));
      Resource got = a.SubFloorZero(b);
      INFO(a.DebugString() << " minus " << b.DebugString());
      REQUIRE(got.Size() == expected.Size());
      REQUIRE(got.fill() == std::max<int64_t>(expected.fill(), 0));
      for (int i = 0; i < expected.Size(); ++i) REQUIRE(got.Get(i) == expected.Get(i));
    }
}

// AddExcess fuses `+= a.SubFloorZero(b)`: the same result for every
// combination of finite, infinite and negative values, fills and widths.
TEST_CASE("AddExcess adds what one resource exceeds another by") {
  const std::vector<Resource> rs = EdgeCases();
  for (const Resource& into : {Resource(), R(1, 2), R(Resource::kInfinite, -3), rs.back()})
    for (const Resource& a : rs)
      for (const Resource& b : rs) {
        Resource expected = into;
        expected += a.SubFloorZero(b);
        Resource got = into;
        got.AddExcess(a, b);
        INFO(into.DebugString() << " + excess of " << a.DebugString() << " over " << b.DebugString());
        REQUIRE(got == expected);
        REQUIRE(got.fill() == expected.fill());
      }
}
