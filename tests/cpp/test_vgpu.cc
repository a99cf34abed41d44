// vGPU cards (api/vgpu.h): registration, the grants annotation, accounting,
// and the fit (Volcano's pkg/scheduler/api/devices/nvidia/vgpu).
#include <catch2/catch.hpp>

#include "helpers.h"
#include "volcanic/api/vgpu.h"

using namespace volcanic;

namespace {

Resource VgpuAllocatable(int cards) {
  Resource r;
  r.Set(ResourceNames::Intern(kVgpuNumber), 10000 * cards);
  r.Set(ResourceNames::Intern(kVgpuCores), 100000 * cards);
  r.Set(ResourceNames::Intern(kVgpuMemory), 16000000 * cards);
  return r;
}

NodeGpus TwoCards() {
  Labels annotations = {{kVgpuRegisterAnnotation, "GPU-a,10,16000,NVIDIA-T4,true,hami-core:"
                                                  "GPU-b,10,16000,NVIDIA-T4,true,hami-core:"}};
  return ParseNodeGpus(annotations, VgpuAllocatable(2));
}

}  // namespace

TEST_CASE("a node registers its cards only with all three vGPU resources allocatable") {
  NodeGpus gpus = TwoCards();
  REQUIRE(gpus.cards.size() == 2);
  REQUIRE(gpus.mode == "hami-core");
  REQUIRE(gpus.cards[1].uuid == "GPU-b");
  REQUIRE(gpus.cards[1].memory == 16000);
  REQUIRE(gpus.cards[1].number == 10);
  Labels annotations = {{kVgpuRegisterAnnotation, "GPU-a,10,16000,NVIDIA-T4,true,hami-core:"}};
  REQUIRE(ParseNodeGpus(annotations, Resource()).cards.empty());
  annotations[kVgpuRegisterAnnotation] = "GPU-a,10,16000:";  // fewer than 6 fields: all dropped
  REQUIRE(ParseNodeGpus(annotations, VgpuAllocatable(1)).cards.empty());
}

TEST_CASE("grants round-trip through the vgpu-ids-new annotation and are accounted per card") {
  GpuGrants grants = {{{"GPU-a", "NVIDIA", 100, 30}, {"GPU-b", "NVIDIA", 100, 30}}, {{"GPU-b", "NVIDIA", 50, 10}}};
  std::string text = EncodeGpuGrants(grants);
  REQUIRE(text == "GPU-a,NVIDIA,100,30:GPU-b,NVIDIA,100,30:;GPU-b,NVIDIA,50,10:");
  REQUIRE(ParseGpuGrants(text) == grants);
  NodeGpus gpus = TwoCards();
  AccountGpuGrants(gpus, grants, +1);
  REQUIRE(gpus.cards[0].used == GpuUse{1, 30, 100});
  REQUIRE(gpus.cards[1].used == GpuUse{2, 40, 150});
  AccountGpuGrants(gpus, grants, -1);
  REQUIRE(gpus.cards[1].used == GpuUse{});
}

TEST_CASE("the fit takes distinct cards per container and sees earlier containers' cards") {
  NodeGpus gpus = TwoCards();
  std::vector<GpuRequest> two_containers = {{1, 1000, 101, 60}, {1, 1000, 101, 60}};
  auto fit = FitGpus(two_containers, {}, gpus, GpuPolicy::kDefault);
  REQUIRE(fit.ok());
  REQUIRE(fit->grants[0][0].uuid == "GPU-b");  // the last card first
  REQUIRE(fit->grants[1][0].uuid == "GPU-a");  // 60 + 60 cores do not share one card
  REQUIRE(GpusFit(two_containers, {}, gpus, GpuPolicy::kDefault));
  std::vector<GpuRequest> three = {{1, 0, 100, 60}, {1, 0, 100, 60}, {1, 0, 100, 60}};
  REQUIRE_FALSE(GpusFit(three, {}, gpus, GpuPolicy::kDefault));
  REQUIRE(FitGpus({{3, 0, 100, 10}}, {}, gpus, GpuPolicy::kDefault).status().message() == "no enough gpu cards");
  REQUIRE(FitGpus({{1, 0, 100, 10}}, {{"volcano.sh/vgpu-mode", "mig"}}, gpus, GpuPolicy::kDefault).status().message() ==
          "pod required sharing mode mig is not the same as the node mode hami-core");
  auto only_a = FitGpus({{1, 100, 101, 10}}, {}, gpus, GpuPolicy::kDefault, 0);
  REQUIRE(only_a.ok());
  REQUIRE(only_a->grants[0][0].uuid == "GPU-a");
}

TEST_CASE("binpack tries the card with the most memory used first and scores by it") {
  NodeGpus gpus = TwoCards();
  AccountGpuGrants(gpus, {{{"GPU-a", "NVIDIA", 4000, 10}}}, +1);
  auto fit = FitGpus({{1, 4000, 101, 10}}, {}, gpus, GpuPolicy::kBinpack);
  REQUIRE(fit.ok());
  REQUIRE(fit->grants[0][0].uuid == "GPU-a");
  REQUIRE(fit->score == Approx(100.0 * 8000 / 16000));
}
