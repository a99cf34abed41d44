// Runs every scenario of tests/scenarios (Volcano's own test cases as objects
// in and decisions out; tests/scenarios/README.md) through a Scheduler and
// checks what tests/python/test_scenarios.py checks, so the C++ suite alone
// covers every Volcano case. The YAML files reach this binary as one JSON
// document that the build writes with tests/scenarios/export_json.py
// (PyYAML), so YAML is read by the same parser as on the Python side.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "helpers.h"
#include "volcanic/api/errors.h"
#include "volcanic/framework/scheduler.h"

using namespace volcanic;
using namespace volcanic::testing;

namespace {

// Scenarios run at a fixed time so condition timestamps are stable (as in
// test_scenarios.py).
constexpr int64_t kNowMs = 1'700'000'000'000;

// What volcanic.schedule passes to the engine; other kinds are skipped.
const std::set<std::string> kSchedulerKinds = {"Node", "Pod", "PodGroup", "Queue", "PriorityClass", "Namespace",
                                               "HyperNode", "PodDisruptionBudget", "ResourceQuota",
                                               "Numatopology", "QueueBinding"};

const json& Scenarios() {
  static const json all = [] {
    std::ifstream in(VOLCANIC_SCENARIOS_JSON);
    if (!in) throw std::runtime_error("cannot read " VOLCANIC_SCENARIOS_JSON "; the build writes it");
    return json::parse(in);
  }();
  return all;
}

// A map of the decisions' pairs, as Python's dict of them.
json PairsObject(const std::vector<std::pair<std::string, std::string>>& pairs) {
  json out = json::object();
  for (const auto& [k, v] : pairs) out[k] = v;
  return out;
}

// An expected map: null means empty, as in the README.
json OrEmpty(const json& v, json empty) { return v.is_null() ? empty : v; }

json ConditionJson(const PodGroupCondition& c) {
  return {{"type", c.type},     {"status", c.status},
          {"transitionID", c.transition_id}, {"lastTransitionTime", c.last_transition_time},
          {"reason", c.reason}, {"message", c.message}};
}

void CheckConditions(const Decisions& d, const json& expected) {
  for (const auto& [key, wants] : expected.items()) {
    INFO("conditions of " << key);
    REQUIRE(d.podgroups.contains(key));
    std::map<std::string, json> got;
    for (const auto& c : d.podgroups.at(key).conditions) got[c.type] = ConditionJson(c);
    for (const json& want : wants) {
      std::string type = want.at("type").get<std::string>();
      INFO("condition " << type);
      if (want.value("absent", false)) {
        CHECK(!got.contains(type));
        continue;
      }
      REQUIRE(got.contains(type));
      for (const auto& [field, value] : want.items()) CHECK(got[type][field] == value);
    }
  }
}

void CheckDecisions(const Decisions& d, const json& expect) {
  if (expect.contains("binds")) CHECK(PairsObject(d.binds) == OrEmpty(expect["binds"], json::object()));
  if (expect.contains("bindCount")) CHECK(PairsObject(d.binds).size() == expect["bindCount"].get<size_t>());
  if (expect.contains("pipelined")) CHECK(PairsObject(d.pipelined) == OrEmpty(expect["pipelined"], json::object()));
  if (expect.contains("evictions")) CHECK(json(d.evictions) == OrEmpty(expect["evictions"], json::array()));
  // Bound to locals: a temporary's items() would outlive it.
  const json podgroups = OrEmpty(expect.value("podgroups", json()), json::object());
  const json unschedulable = OrEmpty(expect.value("unschedulable", json()), json::object());
  const json queues = OrEmpty(expect.value("queues", json()), json::object());
  for (const auto& [key, phase] : podgroups.items()) {
    INFO("podgroup " << key);
    REQUIRE(d.podgroups.contains(key));
    CHECK(d.podgroups.at(key).phase == phase.get<std::string>());
  }
  CheckConditions(d, OrEmpty(expect.value("conditions", json()), json::object()));
  for (const auto& [key, reason] : unschedulable.items()) {
    INFO("unschedulable " << key);
    auto it = d.unschedulable.find(key);
    CHECK((it == d.unschedulable.end() ? json() : json(it->second)) == reason);  // null: no reason at all
  }
  const json why = OrEmpty(expect.value("why", json()), json::object());
  for (const auto& [key, want] : why.items()) {
    INFO("why " << key);
    REQUIRE(d.why.contains(key));
    const JobWhy& got = d.why.at(key);
    if (want.contains("reasons")) CHECK(json(got.reasons) == want["reasons"]);
    if (want.contains("position")) CHECK(got.position == want["position"].get<int>());
    if (want.contains("queuePosition")) CHECK(got.queue_position == want["queuePosition"].get<int>());
  }
  for (const auto& [name, allocated] : queues.items()) {
    INFO("queue " << name);
    REQUIRE(d.queue_allocated.contains(name));
    json got = json::object();
    for (const auto& [resource, quantity] : d.queue_allocated.at(name).ToQuantities()) got[resource] = quantity;
    CHECK(got == allocated);
  }
}

// One session of a fresh Scheduler with the scenario's configuration over
// its objects, as volcanic.schedule runs it.
absl::StatusOr<Decisions> Schedule(const json& sc) {
  absl::StatusOr<SchedulerConf> conf =
      sc["conf"].is_null() ? absl::StatusOr<SchedulerConf>(DefaultSchedulerConf()) : ParseSchedulerConf(sc["conf"]);
  if (!conf.ok()) return conf.status();
  Scheduler s(*conf);
  for (const json& obj : sc.at("objects")) {
    if (obj.is_object() && obj.contains("kind") && obj["kind"].is_string() &&
        !kSchedulerKinds.contains(obj["kind"].get<std::string>()))
      continue;
    if (auto upserted = s.cache().Upsert(obj); !upserted.ok()) return upserted.status();
  }
  const json usages = sc.value("nodeUsage", json::object());
  for (const auto& [node, u] : usages.items()) {
    NodeUsage usage{u.at("cpu").get<double>(), u.at("memory").get<double>(),
                    kNowMs - static_cast<int64_t>(u.value("age", 0.0) * 1000)};
    if (auto set = s.cache().SetNodeUsage(node, usage); !set.ok()) return set.status();
  }
  return s.RunOnce(kNowMs);
}

void RunScenario(const json& sc) {
  REQUIRE(!sc.value("source", std::string()).empty());  // every scenario names its Volcano test
  const json& expect = sc.at("expect");
  absl::StatusOr<Decisions> d = Schedule(sc);
  INFO(d.status().ToString());
  if (expect.contains("configError")) {
    REQUIRE(IsConfigError(d.status()));
    CHECK(absl::StrContains(d.status().message(), expect["configError"].get<std::string>()));
    return;
  }
  REQUIRE(d.ok());
  CheckDecisions(*d, expect);
}

}  // namespace

TEST_CASE("every YAML scenario decides what it expects") {
  REQUIRE(Scenarios().size() >= 40);
  for (const json& sc : Scenarios()) {
    DYNAMIC_SECTION(sc.at("path").get<std::string>()) { RunScenario(sc); }
  }
}
