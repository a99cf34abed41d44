// Builders for tests: Kubernetes JSON objects in the shape of Volcano's test
// utilities (BuildNode, BuildPod, BuildPodGroup, BuildQueue).
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "nlohmann/json.hpp"
#include "volcanic/cache/cache.h"
#include "volcanic/framework/conf.h"
#include "volcanic/framework/decisions.h"
#include "volcanic/framework/registry.h"

namespace volcanic::testing {

using nlohmann::json;

inline json Node(const std::string& name, const std::string& cpu, const std::string& mem,
                 json labels = json::object(), const std::string& pods = "10") {
  return {{"kind", "Node"},
          {"metadata", {{"name", name}, {"labels", labels}}},
          {"status", {{"allocatable", {{"cpu", cpu}, {"memory", mem}, {"pods", pods}}}}}};
}

inline json Pod(const std::string& ns, const std::string& name, const std::string& cpu, const std::string& mem,
                const std::string& group, const std::string& node = "", const std::string& phase = "Pending") {
  json p = {{"kind", "Pod"},
            {"metadata", {{"namespace", ns}, {"name", name}, {"annotations", {{"scheduling.k8s.io/group-name", group}}}}},
            {"spec",
             {{"schedulerName", "volcano"},
              {"containers", json::array({{{"name", "c"}, {"resources", {{"requests", {{"cpu", cpu}, {"memory", mem}}}}}}})}}},
            {"status", {{"phase", phase}}}};
  if (!node.empty()) p["spec"]["nodeName"] = node;
  return p;
}

inline json PodGroup(const std::string& ns, const std::string& name, const std::string& queue, int min_member,
                     const std::string& phase = "Inqueue") {
  return {{"kind", "PodGroup"},
          {"metadata", {{"namespace", ns}, {"name", name}}},
          {"spec", {{"queue", queue}, {"minMember", min_member}}},
          {"status", {{"phase", phase}}}};
}

inline json Queue(const std::string& name, int weight = 1) {
  return {{"kind", "Queue"}, {"metadata", {{"name", name}}}, {"spec", {{"weight", weight}}}};
}

// Upserts every object, failing the test on an error.
void Load(Cache& cache, const json& objects);

// Parses a configuration given as JSON text against `registry`.
SchedulerConf Conf(const std::string& json_text, const Registry& registry = Registry::Builtins());

// The built-in registry plus the test plugin P (default-constructed) as `name`.
template <typename P>
Registry WithTestPlugin(const std::string& name) {
  Registry r = Registry::Builtins();
  absl::Status added = r.AddPlugin(name, [](const Arguments&) -> absl::StatusOr<std::unique_ptr<Plugin>> {
    return std::make_unique<P>();
  });
  if (!added.ok()) throw std::logic_error(added.ToString());
  return r;
}

// One session of a fresh scheduler with `conf` (JSON text) over `objects`,
// failing the test on an error.
Decisions Run(const std::string& conf, const json& objects);

}  // namespace volcanic::testing
