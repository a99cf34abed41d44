// Taints and tolerations (issue "Hardening", defect 3): the indexed answer is
// kube's, checked against kube's rule written plainly (v1helper
// ToleratesTaint over every toleration) on random pods and nodes drawn from
// small alphabets, so that keys, values and effects collide often.
#include <catch2/catch.hpp>

#include <random>

#include "volcanic/api/placement.h"

using namespace volcanic;

namespace {

bool KubeTolerates(const Toleration& t, const Taint& taint) {
  if (!t.effect.empty() && t.effect != taint.effect) return false;
  if (!t.key.empty() && t.key != taint.key) return false;
  if (t.op == "Exists") return true;
  return (t.op.empty() || t.op == "Equal") && t.value == taint.value;
}

bool KubeTolerated(const std::vector<Toleration>& ts, const Taint& taint) {
  for (const auto& t : ts)
    if (KubeTolerates(t, taint)) return true;
  return false;
}

template <typename Rng>
std::string Pick(Rng& rng, std::initializer_list<const char*> options) {
  std::uniform_int_distribution<size_t> d(0, options.size() - 1);
  return *(options.begin() + d(rng));
}

}  // namespace

TEST_CASE("the toleration index answers as kube for every taint") {
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::vector<Toleration> ts(std::uniform_int_distribution<int>(0, 4)(rng));
    TolerationIndex index;
    for (auto& t : ts) {
      t = {Pick(rng, {"", "a", "b"}), Pick(rng, {"", "Equal", "Exists", "Bogus"}), Pick(rng, {"", "x", "y"}),
           Pick(rng, {"", "NoSchedule", "PreferNoSchedule", "NoExecute"})};
      index.Add(t);
    }
    for (int i = 0; i < 8; ++i) {
      Taint taint{Pick(rng, {"", "a", "b", "c"}), Pick(rng, {"", "x", "y"}),
                  Pick(rng, {"NoSchedule", "PreferNoSchedule", "NoExecute"})};
      INFO("round " << round << " taint " << taint.key << "=" << taint.value << ":" << taint.effect);
      REQUIRE(index.Tolerates(taint) == KubeTolerated(ts, taint));
    }
  }
}

TEST_CASE("an empty key with Exists tolerates every taint of its effect, or of any effect without one") {
  TolerationIndex index;
  index.Add({"", "Exists", "", "NoExecute"});
  REQUIRE(index.Tolerates({"k", "v", "NoExecute"}));
  REQUIRE_FALSE(index.Tolerates({"k", "v", "NoSchedule"}));
  index.Add({"", "Exists", "", ""});
  REQUIRE(index.Tolerates({"k", "v", "NoSchedule"}));
}
