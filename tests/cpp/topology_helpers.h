// Fixtures of the network-topology-aware plugin's tests (test_network_topology*.cc),
// after Volcano v1.15.1's util builders (pkg/scheduler/util/test_utils.go).
#pragma once

#include <catch2/catch.hpp>

#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "helpers.h"
#include "volcanic/framework/session.h"

namespace volcanic::testing {

inline constexpr double kEps = 0.1;  // the Go tests' eps

inline json MemberNode(const std::string& name) {
  return {{"type", "Node"}, {"selector", {{"exactMatch", {{"name", name}}}}}};
}

inline json MemberHyperNode(const std::string& name) {
  return {{"type", "HyperNode"}, {"selector", {{"exactMatch", {{"name", name}}}}}};
}

inline json HyperNodeObject(const std::string& name, int tier, json members) {
  return {{"apiVersion", "topology.volcano.sh/v1alpha1"},
          {"kind", "HyperNode"},
          {"metadata", {{"name", name}}},
          {"spec", {{"tier", tier}, {"members", std::move(members)}}}};
}

// Node with extra allocatable resources (util.BuildNode with ScalarResources).
inline json NodeWith(const std::string& name, const std::string& cpu, const std::string& mem, json extra = json::object()) {
  json n = Node(name, cpu, mem);
  for (auto& [k, v] : extra.items()) n["status"]["allocatable"][k] = v;
  return n;
}

// util.BuildPod(ns, name, node, phase, requests, group, labels).
inline json PodOf(const std::string& ns, const std::string& name, const std::string& node, const std::string& phase,
           const std::string& cpu, const std::string& mem, const std::string& group, json labels = json::object(),
           json extra = json::object()) {
  json p = Pod(ns, name, cpu, mem, group, node, phase);
  if (!labels.empty()) p["metadata"]["labels"] = labels;
  for (auto& [k, v] : extra.items()) p["spec"]["containers"][0]["resources"]["requests"][k] = v;
  return p;
}

// util.BuildPodGroupWithNetWorkTopologies (the JobAllocatedHyperNode
// annotation is carried by the test as SetPlacing instead).
inline json PodGroupWithTopology(const std::string& ns, const std::string& name, const std::string& queue, int min_member,
                          const std::string& mode, int highest_tier) {
  json pg = PodGroup(ns, name, queue, min_member, "Inqueue");
  pg["spec"]["networkTopology"] = {{"mode", mode}, {"highestTierAllowed", highest_tier}};
  return pg;
}

// util.BuildSubGroupPolicy(name, matchLabelKeys, mode, highestTierAllowed):
// subGroupSize 1, minSubGroups 0, a networkTopology when mode is given.
inline json SubGroupPolicyJson(const std::string& name, const std::vector<std::string>& keys, const std::string& mode,
                    int highest_tier) {
  json p = {{"name", name}, {"matchLabelKeys", keys}, {"subGroupSize", 1}, {"minSubGroups", 0}};
  if (!mode.empty()) p["networkTopology"] = {{"mode", mode}, {"highestTierAllowed", highest_tier}};
  return p;
}

// The Go tests' common three-tier tree: s0 (tier 3) over s1, s2 (tier 2)
// over s3..s6 (tier 1), each sN holding sN-n1 and sN-n2. `s0_has_s2 = false`
// is the "empty LCA" case, whose s0 lists s1 only.
inline json ThreeTierHyperNodes(bool s0_has_s2 = true) {
  json s0_members = json::array({MemberHyperNode("s1")});
  if (s0_has_s2) s0_members.push_back(MemberHyperNode("s2"));
  json out = json::array({HyperNodeObject("s0", 3, s0_members),
                          HyperNodeObject("s1", 2, json::array({MemberHyperNode("s3"), MemberHyperNode("s4")})),
                          HyperNodeObject("s2", 2, json::array({MemberHyperNode("s5"), MemberHyperNode("s6")}))});
  for (const char* s : {"s3", "s4", "s5", "s6"})
    out.push_back(HyperNodeObject(s, 1, json::array({MemberNode(std::string(s) + "-n1"), MemberNode(std::string(s) + "-n2")})));
  return out;
}

inline json EightNodes(const std::string& cpu, const std::string& mem) {
  json out = json::array();
  for (const char* s : {"s3", "s4", "s5", "s6"})
    for (const char* n : {"-n1", "-n2"}) out.push_back(Node(std::string(s) + n, cpu, mem));
  return out;
}

inline json Concat(std::initializer_list<json> parts) {
  json out = json::array();
  for (const json& p : parts)
    for (const json& o : p) out.push_back(o);
  return out;
}

inline std::string NtaConf(const json& arguments, const json& flags = json::object()) {
  json plugin = {{"name", "network-topology-aware"}, {"arguments", arguments}};
  for (auto& [k, v] : flags.items()) plugin[k] = v;
  json conf = {{"actions", "allocate"}, {"tiers", json::array({{{"plugins", json::array({plugin})}}})}};
  return conf.dump();
}

inline NodeInfo* FindNode(const Session& ssn, const std::string& name) {
  for (NodeInfo* n : ssn.nodes())
    if (n->name == name) return n;
  FAIL("no Ready node " << name);
  return nullptr;
}

inline int FindHyperNode(const Session& ssn, const std::string& name) {
  int i = ssn.topology().tree().Find(name);
  INFO("hypernode " << name);
  REQUIRE(i != HyperNodeTree::kNone);
  return i;
}

// Session::NodeScores of `task` over `names`, by name.
inline std::map<std::string, double> ScoreNodes(Session& ssn, const TaskInfo& task, const std::vector<std::string>& names) {
  std::vector<NodeInfo*> nodes;
  for (const auto& n : names) nodes.push_back(FindNode(ssn, n));
  std::vector<double> scores;
  ssn.NodeScores(task, nodes, &scores);
  std::map<std::string, double> out;
  for (size_t i = 0; i < nodes.size(); ++i) out[names[i]] = scores[i];
  return out;
}

inline void CheckScores(const std::map<std::string, double>& got, const std::map<std::string, double>& want) {
  for (const auto& [name, expected] : want) {
    INFO(name << ": Volcano expects " << expected << ", volcanic gives " << got.at(name));
    CHECK(std::abs(got.at(name) - expected) <= kEps);
  }
}

// A pod's labels with its role (volcano.sh/task-spec).
inline json Labelled(const std::string& role) { return {{"volcano.sh/task-spec", role}}; }

}  // namespace volcanic::testing
