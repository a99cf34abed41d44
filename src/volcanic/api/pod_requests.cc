#include "volcanic/api/pod_requests.h"

#include "absl/strings/str_cat.h"
#include "volcanic/api/status_macros.h"

namespace volcanic {
namespace {

// kube-scheduler's defaults for containers without requests, used in scoring.
constexpr int64_t kDefaultMilliCpuRequest = 100;
constexpr int64_t kDefaultMemoryRequest = 200 * 1024 * 1024;

struct Container {
  std::string name;
  FormattedResource requests;
  bool has_cpu = false, has_mem = false;  // set as a request or a limit
  bool requests_cpu = false;              // has a cpu request (or a cpu limit it defaults to)
  int64_t limit_cpu = 0, limit_mem = 0;
  bool sidecar = false;                   // an init container with restartPolicy Always
};

// A container's requests, each missing one defaulted to its limit.
absl::StatusOr<Container> ReadContainer(const json& c, const Fields& f, const std::string& path) {
  Container out;
  ASSIGN_OR_RETURN(auto name, f.String(c, "name", path));
  out.name = name.value_or("");
  ASSIGN_OR_RETURN(auto policy, f.String(c, "restartPolicy", path));
  out.sidecar = policy == "Always";
  ASSIGN_OR_RETURN(const json* res, f.Find(c, "resources", path));
  if (!res) return out;
  const std::string res_path = path + ".resources";
  FormattedResource limits;
  ASSIGN_OR_RETURN(limits.value, f.Resources(*res, "limits", res_path, {}, &limits.format));
  FormattedResource& r = out.requests;
  ASSIGN_OR_RETURN(r.value, f.Resources(*res, "requests", res_path, {}, &r.format));
  ASSIGN_OR_RETURN(const json* req_json, f.Find(*res, "requests", res_path));
  ASSIGN_OR_RETURN(const json* lim_json, f.Find(*res, "limits", res_path));
  auto requested = [&](const std::string& name) { return req_json && req_json->contains(name); };
  if (lim_json) {
    for (const auto& [name, q] : lim_json->items()) {
      if (requested(name)) continue;
      ResourceId id = ResourceNames::Find(name);  // held by the Fields since it read the limit
      r.value.Set(id, limits.value.Get(id));
      r.format.Set(id, limits.format.Get(id));
    }
  }
  out.has_cpu = requested("cpu") || (lim_json && lim_json->contains("cpu"));
  out.has_mem = requested("memory") || (lim_json && lim_json->contains("memory"));
  out.requests_cpu = out.has_cpu;
  out.limit_cpu = limits.value.Get(kCpu);
  out.limit_mem = limits.value.Get(kMemory);
  return out;
}

}  // namespace

void FormattedResource::Add(const FormattedResource& o) {
  for (int id = 0; id < o.value.Size(); ++id) {
    if (o.value.Get(id) == 0) continue;
    if (value.Get(id) == 0) format.Set(id, o.format.Get(id));
  }
  value += o.value;
}

void FormattedResource::Max(const FormattedResource& o) {
  for (int id = 0; id < o.value.Size(); ++id) {
    if (o.value.Get(id) <= value.Get(id)) continue;
    value.Set(id, o.value.Get(id));
    format.Set(id, o.format.Get(id));
  }
}

// Folds a container into the QoS sums: Guaranteed needs positive cpu and
// memory limits on each, and requests equal to limits in total.
struct QosSums {
  bool limited = true;
  int64_t request_cpu = 0, request_mem = 0, limit_cpu = 0, limit_mem = 0;
  void Add(const Container& c) {
    limited = limited && c.limit_cpu > 0 && c.limit_mem > 0;
    request_cpu += c.requests.value.Get(kCpu);
    request_mem += c.requests.value.Get(kMemory);
    limit_cpu += c.limit_cpu;
    limit_mem += c.limit_mem;
  }
  bool Guaranteed() const {
    return limited && limit_cpu > 0 && request_cpu == limit_cpu && request_mem == limit_mem;
  }
};

absl::StatusOr<PodRequests> ComputePodRequests(const json& spec, const Fields& f, const std::string& spec_path) {
  PodRequests out;
  FormattedResource& total = out.requests;
  QosSums qos;
  ASSIGN_OR_RETURN(const json* containers, f.Array(spec, "containers", spec_path));
  for (size_t i = 0; i < containers->size(); ++i) {
    ASSIGN_OR_RETURN(Container c, ReadContainer((*containers)[i], f, absl::StrCat(spec_path, ".containers[", i, "]")));
    total.Add(c.requests);
    qos.Add(c);
    out.container_cpus.emplace_back(std::move(c.name), c.requests_cpu ? c.requests.value.Get(kCpu) : -1);
    out.nonzero_cpu += c.has_cpu ? c.requests.value.Get(kCpu) : kDefaultMilliCpuRequest;
    out.nonzero_mem += c.has_mem ? c.requests.value.Get(kMemory) : kDefaultMemoryRequest;
  }
  ASSIGN_OR_RETURN(const json* inits, f.Array(spec, "initContainers", spec_path));
  FormattedResource sidecars, init_peak;
  for (size_t i = 0; i < inits->size(); ++i) {
    ASSIGN_OR_RETURN(Container c, ReadContainer((*inits)[i], f, absl::StrCat(spec_path, ".initContainers[", i, "]")));
    qos.Add(c);
    if (c.sidecar) {
      // Keeps running: part of the pod's steady state, and of every later
      // init container's peak.
      total.Add(c.requests);
      sidecars.Add(c.requests);
      init_peak.Max(sidecars);
    } else {
      FormattedResource peak = c.requests;  // runs alone, beside the sidecars started before it
      peak.Add(sidecars);
      init_peak.Max(peak);
    }
  }
  total.Max(init_peak);
  FormattedResource overhead;
  ASSIGN_OR_RETURN(overhead.value, f.Resources(spec, "overhead", spec_path, {}, &overhead.format));
  total.Add(overhead);
  out.guaranteed = qos.Guaranteed();
  if (!out.guaranteed) out.container_cpus.clear();
  return out;
}

}  // namespace volcanic
