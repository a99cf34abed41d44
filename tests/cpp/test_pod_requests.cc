// A pod's request (volcanic/api/pod_requests.h): Kubernetes' PodRequests with
// sidecar init containers, as Volcano's pkg/scheduler/api/pod_info.go
// GetPodResourceRequest computes it, and the engine placing by it.
#include <catch2/catch.hpp>

#include <string>

#include "helpers.h"
#include "volcanic/api/parse.h"
#include "volcanic/api/pod_requests.h"

using namespace volcanic;
using namespace volcanic::testing;

namespace {

json Container(const std::string& cpu, const char* policy = nullptr) {
  json c = {{"name", "c"}, {"resources", {{"requests", {{"cpu", cpu}}}}}};
  if (policy) c["restartPolicy"] = policy;
  return c;
}

// A pod of PodGroup "pg" with a 500m sidecar beside its 2 CPUs.
json SidecarPod(const std::string& name) {
  json p = Pod("ns", name, "2", "1Gi", "pg");
  p["spec"]["initContainers"] = json::array({Container("500m", "Always")});
  return p;
}

int64_t MilliCpu(const json& spec) {
  Fields f;
  auto r = ComputePodRequests(spec, f, "spec");
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return r->requests.value.Get(kCpu);
}

}  // namespace

TEST_CASE("pod requests: sidecars add to the containers and to later init containers", "[pod_requests]") {
  struct Case {
    const char* what;
    json spec;
    int64_t cpu;
  };
  const Case cases[] = {
      {"containers only", {{"containers", {Container("1"), Container("250m")}}}, 1250},
      {"a regular init container larger than the containers",
       {{"containers", {Container("1")}}, {"initContainers", {Container("3")}}}, 3000},
      {"a sidecar adds to the containers", {{"containers", {Container("2")}}, {"initContainers", {Container("500m", "Always")}}}, 2500},
      {"a sidecar before an init container runs beside it",
       {{"containers", {Container("1")}}, {"initContainers", {Container("1", "Always"), Container("2500m")}}}, 3500},
      {"a sidecar after an init container does not",
       {{"containers", {Container("1")}}, {"initContainers", {Container("2500m"), Container("1", "Always")}}}, 2500},
      {"OnFailure is no sidecar", {{"containers", {Container("2")}}, {"initContainers", {Container("500m", "OnFailure")}}}, 2000},
      {"overhead adds last",
       {{"containers", {Container("1")}}, {"initContainers", {Container("2")}}, {"overhead", {{"cpu", "100m"}}}}, 2100},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    CHECK(MilliCpu(c.spec) == c.cpu);
  }
}

TEST_CASE("pod requests: a missing request defaults to its limit; extended resources count", "[pod_requests]") {
  json spec = {{"containers", {{{"name", "a"}, {"resources", {{"limits", {{"cpu", "1"}, {"example.com/fpga", "2"}}}}}}}},
               {"initContainers", {{{"name", "s"}, {"restartPolicy", "Always"},
                                    {"resources", {{"requests", {{"example.com/fpga", "1"}}}}}}}}};
  Fields f;
  auto r = ComputePodRequests(spec, f, "spec");
  REQUIRE(r.ok());
  ResourceNameRefs names = f.TakeResourceNames();
  CHECK(r->requests.value.Get(kCpu) == 1000);
  CHECK(r->requests.value.Get(ResourceNames::Find("example.com/fpga")) == 3000);
}

TEST_CASE("pod requests: each resource keeps Kubernetes' quantity format", "[pod_requests]") {
  json spec = {{"containers", {{{"name", "a"}, {"resources", {{"requests", {{"memory", "1Gi"}, {"cpu", "1e0"}}}}}}}},
               {"initContainers", {{{"name", "i"}, {"resources", {{"requests", {{"memory", "3G"}}}}}}}}};
  Fields f;
  auto r = ComputePodRequests(spec, f, "spec");
  REQUIRE(r.ok());
  CHECK(r->requests.FormatOf(kMemory) == QuantityFormat::kDecimalSI);  // the larger init's
  CHECK(r->requests.FormatOf(kCpu) == QuantityFormat::kDecimalExponent);
}

TEST_CASE("pod requests: a bad quantity names the object and the field", "[pod_requests]") {
  json p = SidecarPod("p");
  p["spec"]["initContainers"][0]["resources"]["requests"]["cpu"] = "lots";
  auto t = ParsePod(p, ParseOptions{});
  REQUIRE_FALSE(t.ok());
  CHECK(std::string(t.status().message()) ==
        "Pod ns/p: spec.initContainers[0].resources.requests.cpu: invalid quantity \"lots\": missing digits");
}

TEST_CASE("the engine does not bind a pod needing 2.5 CPUs with its sidecar to a 2-CPU node", "[pod_requests]") {
  const std::string conf =
      R"({"actions": "enqueue, allocate", "tiers": [{"plugins": [{"name": "gang"}]}, {"plugins": [{"name": "predicates"}]}]})";
  const json group = PodGroup("ns", "pg", "default", 1, "Inqueue");
  Decisions small = Run(conf, json::array({Node("a", "2", "8Gi"), Node("b", "2", "8Gi"), group, SidecarPod("p")}));
  CHECK(small.binds.empty());
  REQUIRE(small.unschedulable.count("ns/p") == 1);
  CHECK(small.unschedulable.at("ns/p").find("Insufficient cpu") != std::string::npos);
  Decisions fits = Run(conf, json::array({Node("n3", "2500m", "8Gi"), group, SidecarPod("p")}));
  REQUIRE(fits.binds.size() == 1);
  CHECK(fits.binds[0].second == "n3");
}
