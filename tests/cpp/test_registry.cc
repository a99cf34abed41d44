// The registry is a value per Scheduler that refuses a taken name (as
// kube-scheduler's framework.Registry does), plugins register through a
// handle bound to their configured name, and every callback is timed per
// plugin and extension point (Decisions::plugin_timings).
#include <catch2/catch.hpp>

#include <algorithm>

#include "absl/strings/match.h"
#include "helpers.h"
#include "volcanic/plugins/plugins.h"
#include "volcanic/api/errors.h"
#include "volcanic/framework/scheduler.h"
#include "volcanic/framework/session.h"

using namespace volcanic;
using namespace volcanic::testing;

namespace {

class Nothing : public Plugin {
 public:
  void OnSessionOpen(PluginHandle&) override {}
};

PluginOr NewNothing(const Arguments&) { return std::make_unique<Nothing>(); }

// Counts its own job_order calls, and records the name its handle gave it.
int g_order_calls = 0;
std::vector<std::string> g_names;

class CountingOrder : public Plugin {
 public:
  void OnSessionOpen(PluginHandle& h) override {
    g_names.push_back(h.name());
    h.AddJobOrderFn([](const JobInfo& l, const JobInfo& r) {
      ++g_order_calls;
      return r.name.compare(l.name);  // reverse name order: no fallback gives it
    });
  }
};

json ThreeJobs() {
  return json::array({Node("n1", "8", "8Gi"), Queue("q"), PodGroup("ns", "c", "q", 1), PodGroup("ns", "a", "q", 1),
                      PodGroup("ns", "b", "q", 1), Pod("ns", "c0", "1", "1Gi", "c"), Pod("ns", "a0", "1", "1Gi", "a"),
                      Pod("ns", "b0", "1", "1Gi", "b")});
}

}  // namespace

TEST_CASE("a registry refuses a name it has, plugin or action, and names it") {
  Registry r = Registry::Builtins();
  absl::Status again = r.AddPlugin("binpack", NewNothing);
  REQUIRE(IsConfigError(again));
  REQUIRE(absl::StrContains(again.message(), "a plugin named \"binpack\" is already registered"));
  REQUIRE(r.AddPlugin("nothing", NewNothing).ok());
  REQUIRE(IsConfigError(r.AddPlugin("nothing", NewNothing)));
  REQUIRE(IsConfigError(r.AddAction("allocate", nullptr)));
  REQUIRE(IsConfigError(r.AddPlugin("", NewNothing)));
}

TEST_CASE("each scheduler owns its registry: adding to one changes no other") {
  Registry mine = Registry::Builtins();
  REQUIRE(mine.AddPlugin("nothing", NewNothing).ok());
  const std::string conf = R"({"actions": "allocate", "tiers": [{"plugins": [{"name": "nothing"}]}]})";
  Scheduler with(Conf(conf, mine), mine);
  REQUIRE(with.RunOnce(0).ok());
  auto parsed = ParseSchedulerConf(json::parse(conf));  // the built-ins only
  REQUIRE(IsConfigError(parsed.status()));
  REQUIRE(absl::StrContains(parsed.status().message(), "unknown plugin \"nothing\""));
  auto names = Registry::Builtins().PluginNames();
  REQUIRE(std::find(names.begin(), names.end(), "nothing") == names.end());
}

TEST_CASE("a plugin's callbacks land under the name the configuration gives it") {
  // One plugin class under two names; only "late" orders jobs (its enable
  // flag), so the order seen is its answer and its handle says "late".
  Registry r = WithTestPlugin<CountingOrder>("early");
  REQUIRE(r.AddPlugin("late", [](const Arguments&) -> PluginOr { return std::make_unique<CountingOrder>(); }).ok());
  g_names.clear();
  Scheduler s(Conf(R"({"actions": "allocate", "tiers": [{"plugins": [
      {"name": "early", "enableJobOrder": false}, {"name": "late"}]}]})",
                   r),
              r);
  Load(s.cache(), ThreeJobs());
  g_order_calls = 0;
  auto d = s.RunOnce(0);
  REQUIRE(d.ok());
  REQUIRE(g_names == std::vector<std::string>{"early", "late"});
  REQUIRE(d->binds.front().first == "ns/c0");
  REQUIRE(!d->plugin_timings.at("early").contains("job_order"));  // registered, disabled, never called
  REQUIRE(d->plugin_timings.at("late").at("job_order").calls == static_cast<uint64_t>(g_order_calls));
  REQUIRE(g_order_calls > 0);
}

TEST_CASE("every plugin's callbacks are timed per extension point") {
  Scheduler s(DefaultSchedulerConf());
  Load(s.cache(), ThreeJobs());
  auto d = s.RunOnce(0);
  REQUIRE(d.ok());
  const auto& t = d->plugin_timings;
  for (const char* plugin : {"priority", "gang", "conformance", "overcommit", "drf", "predicates", "proportion",
                             "nodeorder"}) {
    INFO(plugin);
    REQUIRE(t.contains(plugin));
    REQUIRE(t.at(plugin).at("on_session_open").calls == 1);
    REQUIRE(t.at(plugin).at("on_session_close").calls == 1);
    for (const auto& [hook, time] : t.at(plugin)) REQUIRE(time.nanos >= 0);
  }
  REQUIRE(t.at("gang").at("job_ready").calls > 0);
  REQUIRE(t.at("predicates").at("predicate").calls > 0);
  REQUIRE(t.at("nodeorder").at("node_order").calls > 0);
  REQUIRE(t.at("drf").at("on_allocate").calls == 3);  // one per placed pod
}

TEST_CASE("hook timing counts every call and times its first 32, then one in 32, scaled to all") {
  HookSample s;
  int timed = 0;
  for (int i = 0; i < 100; ++i)
    if (s.Count()) {
      ++timed;
      ++s.timed;
      s.timed_nanos += 10;
    }
  REQUIRE(timed == 32 + 2);  // calls 1..32, 64, 96
  REQUIRE(s.Estimate().calls == 100);
  REQUIRE(s.Estimate().nanos == 1000);  // 10 ns a timed call, for all 100
  REQUIRE(HookSample().Estimate().nanos == 0);
}
