// A pod's resource request, the one rule the engine and the Python side use
// (Kubernetes' component-helpers resource.PodRequests; Volcano's
// pkg/scheduler/api/pod_info.go GetPodResourceRequest):
//
//   max( Σ containers + Σ sidecars,
//        max over init containers i of (i's request + Σ sidecars before i) )
//   + overhead
//
// A sidecar is an init container with restartPolicy Always: it starts in
// order with the init containers and keeps running beside the containers.
// A container's missing request defaults to its limit, as API defaulting
// does. Each resource keeps the format Kubernetes' Quantity arithmetic would
// give it (a sum takes its first non-zero term's, a max the larger's), so the
// Python side can write PodGroup minResources as Volcano does.
//
// Bad input: a wrong type or an invalid quantity is an InvalidArgument
// status naming the object (the Fields) and the field under `spec_path`.
// Cost: linear in the containers and their resources.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "volcanic/api/json_fields.h"
#include "volcanic/api/quantity.h"
#include "volcanic/api/resource.h"

namespace volcanic {

// Values in engine units with the QuantityFormat of each resource.
struct FormattedResource {
  Resource value;
  Resource format;  // a QuantityFormat per id; kDecimalSI (0) where unset

  QuantityFormat FormatOf(ResourceId id) const { return static_cast<QuantityFormat>(format.Get(id)); }
  void Add(const FormattedResource& o);  // Quantity.Add: a zero sum takes the other's format
  void Max(const FormattedResource& o);  // maxResourceList: the strictly larger value wins
};

struct PodRequests {
  FormattedResource requests;  // without the `pods` the scheduler adds
  // kube scoring's non-zero requests: the containers' cpu and memory, 100m
  // and 200Mi for a container that sets none.
  int64_t nonzero_cpu = 0, nonzero_mem = 0;
  // Kubernetes' QoS class is Guaranteed (qos.GetPodQOS, each missing request
  // taken as its limit, as API defaulting does): every container and init
  // container has cpu and memory limits, and the requests sum to the limits.
  bool guaranteed = false;
  // For a Guaranteed pod, each container's name and cpu request in
  // millicores (-1 without one), in order: what numa-aware assigns CPUs to.
  std::vector<std::pair<std::string, int64_t>> container_cpus;
};

absl::StatusOr<PodRequests> ComputePodRequests(const json& spec, const Fields& f, const std::string& spec_path);

}  // namespace volcanic
