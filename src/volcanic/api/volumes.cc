#include "volcanic/api/volumes.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "volcanic/api/json_fields.h"
#include "volcanic/api/parse_fields.h"
#include "volcanic/api/status_macros.h"
#include "volcanic/api/types.h"

namespace volcanic {
namespace {

constexpr char kBetaClassAnnotation[] = "volume.beta.kubernetes.io/storage-class";
constexpr char kBindCompleted[] = "pv.kubernetes.io/bind-completed";
constexpr char kSelectedNode[] = "volume.kubernetes.io/selected-node";
constexpr char kNoProvisioner[] = "kubernetes.io/no-provisioner";
const json kNoTerms = json::array();

absl::StatusOr<uint8_t> ParseAccessModes(const json& spec, const Fields& f) {
  ASSIGN_OR_RETURN(const json* modes, f.Array(spec, "accessModes", "spec"));
  uint8_t bits = 0;
  for (size_t i = 0; i < modes->size(); ++i) {
    const json& m = (*modes)[i];
    if (!m.is_string()) return f.Error(absl::StrCat("spec.accessModes[", i, "]"), "must be a string");
    const std::string& mode = m.get_ref<const std::string&>();
    if (mode == "ReadWriteOnce") bits |= kReadWriteOnce;
    else if (mode == "ReadOnlyMany") bits |= kReadOnlyMany;
    else if (mode == "ReadWriteMany") bits |= kReadWriteMany;
    else if (mode == "ReadWriteOncePod") bits |= kReadWriteOncePod;
    else return f.Error(absl::StrCat("spec.accessModes[", i, "]"), absl::StrCat("unknown access mode \"", mode, "\""));
  }
  return bits;
}

absl::StatusOr<bool> ParseBlockMode(const json& spec, const Fields& f) {
  ASSIGN_OR_RETURN(auto mode, f.String(spec, "volumeMode", "spec"));
  return mode && *mode == "Block";
}

// kube's GetPersistentVolumeClass / GetPersistentVolumeClaimClass: the beta
// annotation first, then spec.storageClassName.
absl::StatusOr<std::string> ClassOf(const Meta& m, const json& spec, const Fields& f) {
  if (auto it = m.annotations.find(kBetaClassAnnotation); it != m.annotations.end()) return it->second;
  ASSIGN_OR_RETURN(auto name, f.String(spec, "storageClassName", "spec"));
  return name.value_or("");
}

// One storage quantity, in bytes, at base[key] (0 when absent).
absl::StatusOr<int64_t> StorageAt(const json& base, const Fields& f, const std::string& key,
                                  const std::string& path) {
  ASSIGN_OR_RETURN(const json* list, f.Find(base, key, path));
  if (!list) return 0;
  ASSIGN_OR_RETURN(const json* storage, f.Find(*list, "storage", path + "." + key));
  if (!storage) return 0;
  auto bytes = QuantityFromJson(*storage, kEphemeralStorage);
  if (!bytes.ok()) return f.Error(path + "." + key + ".storage", std::string(bytes.status().message()));
  return *bytes;
}

absl::StatusOr<std::string> ControllerUid(const json& obj, const Fields& f) {
  ASSIGN_OR_RETURN(const json* refs, f.Array(obj.at("metadata"), "ownerReferences", "metadata"));
  for (size_t i = 0; i < refs->size(); ++i) {
    std::string path = absl::StrCat("metadata.ownerReferences[", i, "]");
    ASSIGN_OR_RETURN(auto controller, f.Bool((*refs)[i], "controller", path));
    if (!controller.value_or(false)) continue;
    ASSIGN_OR_RETURN(auto uid, f.String((*refs)[i], "uid", path));
    return uid.value_or("");
  }
  return std::string();
}

const json& SpecOf(const json& obj, const Fields& f, absl::Status* error) {
  static const json kEmpty = json::object();
  auto spec = f.Find(obj, "spec", "");
  if (!spec.ok()) *error = spec.status();
  return spec.ok() && *spec ? **spec : kEmpty;
}

// kube's MatchTopologySelectorTerms: no terms match every node; a term
// matches when each of its keys has one of its values (an empty term: always).
bool TopologyMatches(const std::vector<NodeSelectorTerm>& terms, const Labels& labels) {
  if (terms.empty()) return true;
  for (const auto& term : terms) {
    bool all = true;
    for (const auto& r : term.match_expressions) {
      auto it = labels.find(r.key);
      all = all && it != labels.end() && std::find(r.values.begin(), r.values.end(), it->second) != r.values.end();
    }
    if (all) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<PersistentVolumeInfo> ParsePersistentVolume(const json& obj) {
  Fields f(obj);
  ASSIGN_OR_RETURN(Meta m, ParseMeta(obj, f, false));
  absl::Status error;
  const json& spec = SpecOf(obj, f, &error);
  RETURN_IF_ERROR(error);
  PersistentVolumeInfo pv;
  pv.name = m.name;
  pv.deleting = m.deleting;
  pv.labels = std::move(m.labels);
  ASSIGN_OR_RETURN(pv.storage_class, ClassOf(m, spec, f));
  ASSIGN_OR_RETURN(pv.capacity, StorageAt(spec, f, "capacity", "spec"));
  ASSIGN_OR_RETURN(pv.access_modes, ParseAccessModes(spec, f));
  ASSIGN_OR_RETURN(pv.block, ParseBlockMode(spec, f));
  ASSIGN_OR_RETURN(const json* ref, f.Find(spec, "claimRef", "spec"));
  if (ref) {
    ASSIGN_OR_RETURN(auto ns, f.String(*ref, "namespace", "spec.claimRef"));
    ASSIGN_OR_RETURN(auto name, f.String(*ref, "name", "spec.claimRef"));
    ASSIGN_OR_RETURN(auto uid, f.String(*ref, "uid", "spec.claimRef"));
    pv.claim_ref = absl::StrCat(ns.value_or(""), "/", name.value_or(""));
    pv.claim_ref_uid = uid.value_or("");
  }
  ASSIGN_OR_RETURN(const json* affinity, f.Find(spec, "nodeAffinity", "spec"));
  if (affinity) {
    ASSIGN_OR_RETURN(const json* required, f.Find(*affinity, "required", "spec.nodeAffinity"));
    pv.has_node_affinity = required != nullptr;
    std::string path = "spec.nodeAffinity.required";
    ASSIGN_OR_RETURN(const json* terms, required ? f.Array(*required, "nodeSelectorTerms", path) : &kNoTerms);
    for (size_t i = 0; i < terms->size(); ++i) {
      ASSIGN_OR_RETURN(auto term, ParseTerm((*terms)[i], f, absl::StrCat(path, ".nodeSelectorTerms[", i, "]")));
      pv.node_affinity.push_back(std::move(term));
    }
  }
  ASSIGN_OR_RETURN(const json* status, f.Find(obj, "status", ""));
  if (status) {
    ASSIGN_OR_RETURN(auto phase, f.String(*status, "phase", "status"));
    pv.phase = phase.value_or("");
  }
  return pv;
}

absl::StatusOr<ClaimInfo> ParsePersistentVolumeClaim(const json& obj) {
  Fields f(obj);
  ASSIGN_OR_RETURN(Meta m, ParseMeta(obj, f, true));
  absl::Status error;
  const json& spec = SpecOf(obj, f, &error);
  RETURN_IF_ERROR(error);
  ClaimInfo c;
  c.ns = m.ns;
  c.name = m.name;
  c.key = m.ns + "/" + m.name;
  c.uid = m.uid;
  c.deleting = m.deleting;
  ASSIGN_OR_RETURN(c.owner_uid, ControllerUid(obj, f));
  ASSIGN_OR_RETURN(c.storage_class, ClassOf(m, spec, f));
  ASSIGN_OR_RETURN(auto volume, f.String(spec, "volumeName", "spec"));
  c.volume_name = volume.value_or("");
  c.bind_completed = m.annotations.contains(kBindCompleted);
  if (auto it = m.annotations.find(kSelectedNode); it != m.annotations.end()) c.selected_node = it->second;
  ASSIGN_OR_RETURN(const json* resources, f.Find(spec, "resources", "spec"));
  if (resources) {
    ASSIGN_OR_RETURN(c.request, StorageAt(*resources, f, "requests", "spec.resources"));
  }
  ASSIGN_OR_RETURN(c.access_modes, ParseAccessModes(spec, f));
  ASSIGN_OR_RETURN(c.block, ParseBlockMode(spec, f));
  ASSIGN_OR_RETURN(const json* selector, f.Find(spec, "selector", "spec"));
  if (selector) {
    ASSIGN_OR_RETURN(c.selector, ParseLabelSelector(*selector, f, "spec.selector"));
  }
  ASSIGN_OR_RETURN(const json* status, f.Find(obj, "status", ""));
  if (status) {
    ASSIGN_OR_RETURN(auto phase, f.String(*status, "phase", "status"));
    c.lost = phase && *phase == "Lost";
  }
  return c;
}

absl::StatusOr<StorageClassInfo> ParseStorageClass(const json& obj) {
  Fields f(obj);
  ASSIGN_OR_RETURN(Meta m, ParseMeta(obj, f, false));
  StorageClassInfo sc;
  sc.name = m.name;
  ASSIGN_OR_RETURN(auto provisioner, f.String(obj, "provisioner", ""));
  sc.provisioner = provisioner.value_or("");
  ASSIGN_OR_RETURN(auto mode, f.String(obj, "volumeBindingMode", ""));
  sc.wait_for_first_consumer = mode && *mode == "WaitForFirstConsumer";
  ASSIGN_OR_RETURN(const json* terms, f.Array(obj, "allowedTopologies", ""));
  for (size_t i = 0; i < terms->size(); ++i) {
    std::string path = absl::StrCat("allowedTopologies[", i, "]");
    ASSIGN_OR_RETURN(const json* exprs, f.Array((*terms)[i], "matchLabelExpressions", path));
    NodeSelectorTerm term;
    for (size_t j = 0; j < exprs->size(); ++j) {
      std::string epath = absl::StrCat(path, ".matchLabelExpressions[", j, "]");
      NodeSelectorRequirement r;
      ASSIGN_OR_RETURN(auto key, f.String((*exprs)[j], "key", epath));
      if (!key) return f.Error(epath + ".key", "is required");
      r.key = *key;
      r.op = "In";
      ASSIGN_OR_RETURN(const json* values, f.Array((*exprs)[j], "values", epath));
      for (size_t k = 0; k < values->size(); ++k) {
        if (!(*values)[k].is_string()) return f.Error(absl::StrCat(epath, ".values[", k, "]"), "must be a string");
        r.values.push_back((*values)[k].get<std::string>());
      }
      term.match_expressions.push_back(std::move(r));
    }
    sc.allowed_topologies.push_back(std::move(term));
  }
  return sc;
}

absl::StatusOr<std::vector<PodClaim>> ParsePodClaims(const json& spec, const Fields& f, const std::string& pod_name) {
  std::vector<PodClaim> claims;
  ASSIGN_OR_RETURN(const json* volumes, f.Array(spec, "volumes", "spec"));
  for (size_t i = 0; i < volumes->size(); ++i) {
    const json& v = (*volumes)[i];
    std::string path = absl::StrCat("spec.volumes[", i, "]");
    ASSIGN_OR_RETURN(const json* pvc, f.Find(v, "persistentVolumeClaim", path));
    if (pvc) {
      ASSIGN_OR_RETURN(auto name, f.String(*pvc, "claimName", path + ".persistentVolumeClaim"));
      if (!name || name->empty()) return f.Error(path + ".persistentVolumeClaim.claimName", "is required");
      claims.push_back({*name, false});
    } else if (Fields::Has(v, "ephemeral")) {
      ASSIGN_OR_RETURN(auto name, f.String(v, "name", path));
      if (!name || name->empty()) return f.Error(path + ".name", "is required");
      claims.push_back({pod_name + "-" + *name, true});  // kube's ephemeral.VolumeClaimName
    }
  }
  return claims;
}

bool PersistentVolumeInfo::MatchesNode(const NodeInfo& n) const {
  if (!has_node_affinity) return true;
  for (const auto& term : node_affinity)
    if (TermMatches(term, n.name, n.labels)) return true;
  return false;
}

bool PersistentVolumeInfo::BoundTo(const std::string& claim_key, const std::string& claim_uid) const {
  if (claim_ref.empty()) return assumed_claim == claim_key;
  return claim_ref == claim_key && (claim_ref_uid.empty() || claim_ref_uid == claim_uid);
}

bool Volumes::Upsert(PersistentVolumeInfo pv) {
  auto it = volumes_.find(pv.name);
  if (it != volumes_.end()) {
    if (pv.claim_ref.empty()) {  // what this scheduler chose is not written yet
      pv.assumed_claim = it->second.assumed_claim;
      pv.assumed_refs = it->second.assumed_refs;
    }
    if (it->second == pv) return false;
    if (it->second.storage_class != pv.storage_class) volumes_by_class_[it->second.storage_class].erase(pv.name);
  }
  volumes_by_class_[pv.storage_class].insert(pv.name);
  volumes_[pv.name] = std::move(pv);
  return true;
}

bool Volumes::Upsert(ClaimInfo claim) {
  auto it = claims_.find(claim.key);
  if (it != claims_.end()) {
    if (claim.selected_node.empty() && claim.volume_name.empty()) {
      claim.assumed_node = it->second.assumed_node;
      claim.assumed_refs = it->second.assumed_refs;
    }
    if (it->second == claim) return false;
  }
  claims_[claim.key] = std::move(claim);
  return true;
}

bool Volumes::Upsert(StorageClassInfo sc) {
  auto it = classes_.find(sc.name);
  if (it != classes_.end() && it->second == sc) return false;
  classes_[sc.name] = std::move(sc);
  return true;
}

void Volumes::DeleteVolume(const std::string& name) {
  auto it = volumes_.find(name);
  if (it == volumes_.end()) return;
  volumes_by_class_[it->second.storage_class].erase(name);
  volumes_.erase(it);
}

void Volumes::DeleteClaim(const std::string& key) { claims_.erase(key); }
void Volumes::DeleteClass(const std::string& name) { classes_.erase(name); }

const ClaimInfo* Volumes::FindClaim(const std::string& key) const {
  auto it = claims_.find(key);
  return it == claims_.end() ? nullptr : &it->second;
}

// kube's podHasPVCs, then GetPodVolumeClaims (volume_binding.go, binder.go).
bool Volumes::Sort(const TaskInfo& t, Sorted* out, std::string* why) const {
  std::vector<const ClaimInfo*> claims;
  for (const PodClaim& pc : t.claims) {
    const ClaimInfo* c = FindClaim(t.ns + "/" + pc.name);
    if (!c) {
      *why = pc.ephemeral
                 ? absl::StrCat("waiting for ephemeral volume controller to create the persistentvolumeclaim \"",
                                pc.name, "\"")
                 : absl::StrCat("persistentvolumeclaim \"", pc.name, "\" not found");
      return false;
    }
    if (c->lost) {
      *why = absl::StrCat("persistentvolumeclaim \"", c->name, "\" bound to non-existent persistentvolume \"",
                          c->volume_name, "\"");
      return false;
    }
    if (c->deleting) {
      *why = absl::StrCat("persistentvolumeclaim \"", c->name, "\" is being deleted");
      return false;
    }
    if (pc.ephemeral && c->owner_uid != t.uid) {
      *why = absl::StrCat("PVC ", c->key, " was not created for pod ", t.key, " (pod is not owner)");
      return false;
    }
    claims.push_back(c);
  }
  bool immediate = false;
  for (const ClaimInfo* c : claims) {
    if (c->FullyBound()) {
      out->bound.push_back(c);
      continue;
    }
    bool delayed = false;
    if (!c->storage_class.empty()) {
      auto sc = classes_.find(c->storage_class);
      if (sc == classes_.end()) {
        *why = absl::StrCat("storageclass.storage.k8s.io \"", c->storage_class, "\" not found");
        return false;
      }
      delayed = sc->second.wait_for_first_consumer;
    }
    if (delayed && c->volume_name.empty()) {
      out->delayed.push_back(c);
    } else {
      immediate = true;  // prebound claims too: the PV controller finishes them
    }
  }
  if (immediate) {
    *why = "pod has unbound immediate PersistentVolumeClaims";
    return false;
  }
  return true;
}

std::string Volumes::PreCheck(const TaskInfo& t) const {
  Sorted sorted;
  std::string why;
  Sort(t, &sorted, &why);
  return why;
}

// kube's FindMatchingVolume (component-helpers storage/volume/pv_helpers.go)
// with delayed binding and a node; ties go to the first PV by name.
const PersistentVolumeInfo* Volumes::Match(const ClaimInfo& c, const NodeInfo& n, const VolumeChoices& taken) const {
  auto names = volumes_by_class_.find(c.storage_class);
  if (names == volumes_by_class_.end()) return nullptr;
  const PersistentVolumeInfo* best = nullptr;
  for (const std::string& name : names->second) {
    const PersistentVolumeInfo& pv = volumes_.at(name);
    bool excluded = std::any_of(taken.begin(), taken.end(), [&](const VolumeChoice& ch) { return ch.volume == name; });
    bool claimed = !pv.claim_ref.empty() || pv.assumed_refs > 0;
    if (excluded || (claimed && !pv.BoundTo(c.key, c.uid))) continue;
    if (pv.capacity < c.request || pv.block != c.block || pv.deleting) continue;
    bool fits_node = pv.MatchesNode(n);
    if (claimed) return fits_node ? &pv : nullptr;  // prebound to this claim: that one or none
    if (pv.phase != "Available" || (c.selector && !c.selector->Matches(pv.labels)) || !fits_node) continue;
    if ((pv.access_modes & c.access_modes) != c.access_modes) continue;
    if (!best || pv.capacity < best->capacity) best = &pv;
  }
  return best;
}

// kube's checkVolumeProvisions for one claim.
bool Volumes::Provisionable(const ClaimInfo& c, const NodeInfo& n, std::string* error) const {
  if (c.storage_class.empty()) {
    *error = absl::StrCat("no class for claim \"", c.key, "\"");
    return false;
  }
  auto sc = classes_.find(c.storage_class);
  if (sc == classes_.end()) {
    *error = absl::StrCat("failed to find storage class \"", c.storage_class, "\"");
    return false;
  }
  const StorageClassInfo& cls = sc->second;
  if (cls.provisioner.empty() || cls.provisioner == kNoProvisioner) return false;
  return TopologyMatches(cls.allowed_topologies, n.labels);
}

// kube's FindPodVolumes.
void Volumes::Check(const TaskInfo& t, const NodeInfo& n, std::vector<std::string>* reasons,
                    VolumeChoices* choices) const {
  Sorted sorted;
  std::string why;
  if (!Sort(t, &sorted, &why)) {
    reasons->push_back(why);
    return;
  }
  bool bound_fit = true, pvs_found = true, unbound_fit = true;
  for (const ClaimInfo* c : sorted.bound) {
    auto pv = volumes_.find(c->volume_name);
    pvs_found = pv != volumes_.end();
    bound_fit = !pvs_found || pv->second.MatchesNode(n);
    if (!pvs_found || !bound_fit) break;
  }
  VolumeChoices chosen;
  std::vector<const ClaimInfo*> to_match, to_provision;
  for (const ClaimInfo* c : sorted.delayed) {
    const std::string& selected = c->SelectedNode();
    if (selected.empty()) to_match.push_back(c);
    else if (selected == n.name) to_provision.push_back(c);
    else unbound_fit = false;  // being provisioned for another node
  }
  if (unbound_fit) {
    std::stable_sort(to_match.begin(), to_match.end(),
                     [](const ClaimInfo* a, const ClaimInfo* b) { return a->request < b->request; });
    for (const ClaimInfo* c : to_match) {
      if (const PersistentVolumeInfo* pv = Match(*c, n, chosen)) chosen.push_back({c->key, pv->name});
      else to_provision.push_back(c);
    }
    for (const ClaimInfo* c : to_provision) {
      std::string error;
      if (!Provisionable(*c, n, &error)) {
        if (!error.empty()) reasons->push_back(error);
        unbound_fit = false;
        break;
      }
      chosen.push_back({c->key, ""});
    }
  }
  if (!bound_fit) reasons->push_back(kVolumeNodeConflict);
  if (!unbound_fit) reasons->push_back(kVolumeBindConflict);
  if (!pvs_found) reasons->push_back(kVolumePvNotExist);
  if (choices && reasons->empty()) *choices = std::move(chosen);
}

void Volumes::Reserve(TaskInfo* t, const NodeInfo& n) {
  std::vector<std::string> reasons;
  VolumeChoices choices;
  Check(*t, n, &reasons, &choices);
  for (const VolumeChoice& ch : choices) {
    if (!ch.volume.empty()) {
      PersistentVolumeInfo& pv = volumes_.at(ch.volume);
      pv.assumed_claim = ch.claim;
      ++pv.assumed_refs;
    } else {
      ClaimInfo& c = claims_.at(ch.claim);
      c.assumed_node = n.name;
      ++c.assumed_refs;
    }
  }
  t->volume_choices = std::move(choices);
}

void Volumes::Revert(TaskInfo* t) {
  for (const VolumeChoice& ch : t->volume_choices) {
    if (!ch.volume.empty()) {
      auto pv = volumes_.find(ch.volume);
      if (pv == volumes_.end() || pv->second.assumed_claim != ch.claim || pv->second.assumed_refs == 0) continue;
      if (--pv->second.assumed_refs == 0) pv->second.assumed_claim.clear();
    } else {
      auto c = claims_.find(ch.claim);
      if (c == claims_.end() || c->second.assumed_refs == 0) continue;
      if (--c->second.assumed_refs == 0) c->second.assumed_node.clear();
    }
  }
  t->volume_choices.clear();
}

}  // namespace volcanic
