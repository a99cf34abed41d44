// The shuffle action and the VictimTasks point it asks (reference §4.4):
// Volcano's TestShuffle, with its fake plugin, and the tier rule.
#include <catch2/catch.hpp>

#include <functional>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "helpers.h"
#include "volcanic/framework/scheduler.h"
#include "volcanic/framework/session.h"
#include "volcanic/framework/tiers.h"

using namespace volcanic;
using namespace volcanic::testing;

namespace {

constexpr int32_t kLow = 10, kHigh = 100;

// TestShuffle's fake plugin: every low-priority candidate is a victim.
class LowPriorityVictims : public Plugin {
 public:
  void OnSessionOpen(PluginHandle& h) override {
    h.AddVictimTasksFn([](const std::vector<TaskInfo*>& candidates) {
      std::vector<TaskInfo*> victims;
      for (TaskInfo* t : candidates)
        if (t->priority == kLow) victims.push_back(t);
      return victims;
    });
  }
};

json RunningPod(const std::string& name, const std::string& node, const std::string& group, int32_t priority) {
  json p = Pod("test", name, "1", "2G", group, node, "Running");
  p["spec"]["priority"] = priority;
  return p;
}

Decisions Shuffle(bool victim_enabled) {
  Registry registry = WithTestPlugin<LowPriorityVictims>("fake");
  Scheduler s(Conf(absl::StrCat(R"({"actions": "shuffle", "tiers": [{"plugins": [{"name": "fake", "enabledVictim": )",
                                victim_enabled ? "true" : "false", "}]}]}"),
                   registry),
              registry);
  json objects = json::array({Node("node1", "4", "8Gi"), Node("node2", "4", "8Gi"), Queue("default"),
                              PodGroup("test", "pg1", "default", 0, "Running"),
                              PodGroup("test", "pg2", "default", 0, "Running"),
                              PodGroup("test", "pg3", "default", 0, "Running")});
  using Row = std::tuple<std::string, std::string, std::string, int32_t>;
  for (const auto& [name, node, group, priority] : std::vector<Row>{{"pod1-1", "node1", "pg1", kLow},
                                                                    {"pod1-2", "node1", "pg1", kHigh},
                                                                    {"pod1-3", "node1", "pg1", kHigh},
                                                                    {"pod2-1", "node1", "pg2", kLow},
                                                                    {"pod2-2", "node2", "pg2", kHigh},
                                                                    {"pod3-1", "node2", "pg3", kLow},
                                                                    {"pod3-2", "node2", "pg3", kHigh}})
    objects.push_back(RunningPod(name, node, group, priority));
  Load(s.cache(), objects);
  auto d = s.RunOnce(0);
  REQUIRE(d.ok());
  return *d;
}

}  // namespace

// volcano pkg/scheduler/actions/shuffle/shuffle_test.go TestShuffle
// "select pods with low priority and evict them"; evicted in pod-key order.
TEST_CASE("shuffle evicts the victims the plugins name", "[shuffle]") {
  REQUIRE(Shuffle(true).evictions == std::vector<std::string>{"test/pod1-1", "test/pod2-1", "test/pod3-1"});
}

TEST_CASE("shuffle asks only plugins with enabledVictim", "[shuffle]") {
  REQUIRE(Shuffle(false).evictions.empty());
}

TEST_CASE("shuffle refuses arguments", "[shuffle]") {
  auto conf = ParseSchedulerConf(json::parse(
      R"({"actions": "shuffle", "tiers": [{"plugins": [{"name": "gang"}]}],
          "configurations": [{"name": "shuffle", "arguments": {"interval": "1m"}}]})"));
  REQUIRE_FALSE(conf.ok());
  REQUIRE(std::string(conf.status().message()).find("unknown argument \"interval\"") != std::string::npos);
}

using UnionFn = std::function<std::vector<int>(int)>;

TEST_CASE("VictimTasks: the first tier naming a victim decides, its answers united", "[shuffle]") {
  Tiered<UnionFn> t = {{[](int) { return std::vector<int>{}; }},
                       {[](int) { return std::vector<int>{3, 1}; }, [](int) { return std::vector<int>{1, 2}; }},
                       {[](int) { return std::vector<int>{9}; }}};
  REQUIRE(FirstTierUnion<int>(t, 0) == std::vector<int>{3, 1, 2});
  Tiered<UnionFn> none = {{[](int) { return std::vector<int>{}; }}, {}};
  REQUIRE(FirstTierUnion<int>(none, 0).empty());
}
