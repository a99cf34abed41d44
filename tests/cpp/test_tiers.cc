// Volcano's tier combination rules (reference §4.4), on plain callbacks.
#include <catch2/catch.hpp>

#include <functional>

#include "volcanic/framework/tiers.h"

using namespace volcanic;

using IntFn = std::function<int(int)>;
using BoolFn = std::function<bool(int)>;
using VictimFn = std::function<std::optional<std::vector<int>>(int)>;

TEST_CASE("order points: the first non-zero comparison wins across tiers") {
  Tiered<IntFn> t = {{[](int) { return 0; }, [](int) { return 0; }}, {[](int) { return -1; }, [](int) { return 1; }}};
  REQUIRE(FirstNonZero(t, 0) == -1);
  Tiered<IntFn> none = {{[](int) { return 0; }}, {}};
  REQUIRE(FirstNonZero(none, 0) == 0);
}

TEST_CASE("AND and OR points") {
  Tiered<BoolFn> t = {{[](int x) { return x > 0; }}, {[](int x) { return x > 5; }}};
  REQUIRE(AllTrue(t, 6));
  REQUIRE_FALSE(AllTrue(t, 3));
  REQUIRE(AnyTrue(t, 3));
  REQUIRE_FALSE(AnyTrue(t, -1));
  REQUIRE(AllTrue(Tiered<BoolFn>{}, 0));
  REQUIRE_FALSE(AnyTrue(Tiered<BoolFn>{}, 0));
}

TEST_CASE("votes: reject wins, a permitting tier decides, abstaining means yes") {
  auto v = [](int vote) { return IntFn([vote](int) { return vote; }); };
  REQUIRE_FALSE(Vote(Tiered<IntFn>{{v(kPermit), v(kReject)}}, 0));
  REQUIRE(Vote(Tiered<IntFn>{{v(kAbstain), v(kPermit)}, {v(kReject)}}, 0));  // tier 1 decided
  REQUIRE_FALSE(Vote(Tiered<IntFn>{{v(kAbstain)}, {v(kReject)}}, 0));
  REQUIRE(Vote(Tiered<IntFn>{{v(kAbstain)}, {v(kAbstain)}}, 0));
}

TEST_CASE("JobStarving: the first tier with callbacks decides") {
  Tiered<BoolFn> t = {{}, {[](int) { return true; }, [](int) { return false; }}, {[](int) { return true; }}};
  REQUIRE_FALSE(FirstTierAll(t, 0));
  REQUIRE_FALSE(FirstTierAll(Tiered<BoolFn>{{}, {}}, 0));
  REQUIRE(FirstTierAll(Tiered<BoolFn>{{}, {[](int) { return true; }}}, 0));
}

TEST_CASE("victims: abstainers skipped, answers intersected within a tier, the first answering tier decides") {
  auto ans = [](std::vector<int> v) { return VictimFn([v](int) { return std::optional<std::vector<int>>(v); }); };
  VictimFn abstain = [](int) { return std::nullopt; };
  REQUIRE(Victims<int>(Tiered<VictimFn>{{abstain, ans({1, 2, 3}), ans({3, 2})}}, 0) == std::vector<int>{2, 3});
  // An empty answer is a veto: later tiers are not asked (Volcano would ask tier 2).
  REQUIRE(Victims<int>(Tiered<VictimFn>{{ans({}), ans({1})}, {ans({4})}}, 0).empty());
  REQUIRE(Victims<int>(Tiered<VictimFn>{{ans({1}), ans({2})}, {ans({3})}}, 0).empty());
  // A tier where everyone abstains leaves the decision to the next.
  REQUIRE(Victims<int>(Tiered<VictimFn>{{abstain}, {ans({5, 6}), abstain}}, 0) == std::vector<int>{5, 6});
  // Nobody answers: no victims.
  REQUIRE(Victims<int>(Tiered<VictimFn>{{abstain}}, 0).empty());
}
