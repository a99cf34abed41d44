// PersistentVolumes, PersistentVolumeClaims and StorageClasses as the
// scheduler reads them, and kube-scheduler's volume binding over them
// (volumebinding/binder.go, which Volcano's predicates wrap:
// pkg/scheduler/capabilities/volumebinding in Volcano v1.15.1).
//
// A pod's claims are sorted, as kube does, into:
//   bound       spec.volumeName set and annotated pv.kubernetes.io/bind-completed:
//               the node must match the PV's node affinity;
//   delayed     unbound, of a WaitForFirstConsumer class: the node must offer a
//               matching Available PV (the smallest wins) or be where the class
//               may provision (a provisioner, allowedTopologies);
//   immediate   any other unbound claim: the pod waits for the PV controller.
// A claim annotated volume.kubernetes.io/selected-node is being provisioned
// for that node only.
//
// What a session chose for a placed pod (a PV for a claim, or provisioning
// on the node) is assumed here, as kube's assume cache does, so later pods of
// the session and of later sessions do not take the same PV, until the PV's
// claimRef or the claim's annotation comes back from the API, or the pod's
// placement is dropped (Revert). Assumptions are counted: pods sharing a
// claim assume the same choice.
//
// Cost: O(claims of the pod × PVs of the claim's class) per node checked, and
// nothing for pods without claims; such pods are not node-local (their
// answers change with the volumes), so they are searched over every node.
// Left out: CSIStorageCapacity (every node has room), volume limits, volume
// attributes classes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "volcanic/api/json_fields.h"
#include "volcanic/api/placement.h"

namespace volcanic {

using nlohmann::json;

struct TaskInfo;
struct NodeInfo;

// spec.accessModes as bits.
enum AccessMode : uint8_t {
  kReadWriteOnce = 1,
  kReadOnlyMany = 2,
  kReadWriteMany = 4,
  kReadWriteOncePod = 8,
};

// A claim a pod uses: spec.volumes[].persistentVolumeClaim.claimName, or the
// claim "<pod>-<volume>" of an ephemeral volume.
struct PodClaim {
  std::string name;
  bool ephemeral = false;
  bool operator==(const PodClaim&) const = default;
};

// What a session chose for one claim of a pod on its node.
struct VolumeChoice {
  std::string claim;   // "ns/name"
  std::string volume;  // the PV to bind it to; empty: provision it on the node
  bool operator==(const VolumeChoice&) const = default;
};
using VolumeChoices = std::vector<VolumeChoice>;

struct PersistentVolumeInfo {
  std::string name, storage_class, phase;
  int64_t capacity = 0;  // bytes
  uint8_t access_modes = 0;
  bool block = false;  // volumeMode Block
  bool deleting = false;
  Labels labels;
  bool has_node_affinity = false;              // spec.nodeAffinity.required
  std::vector<NodeSelectorTerm> node_affinity;  // ORed
  std::string claim_ref, claim_ref_uid;       // spec.claimRef as "ns/name"
  // Claimed by pods this scheduler placed (claim_ref empty until the API says).
  std::string assumed_claim;
  int assumed_refs = 0;

  bool MatchesNode(const NodeInfo& n) const;
  // kube's IsVolumeBoundToClaim, counting what is assumed.
  bool BoundTo(const std::string& claim_key, const std::string& claim_uid) const;
  bool operator==(const PersistentVolumeInfo&) const = default;
};

struct ClaimInfo {
  std::string ns, name, key, uid, owner_uid;  // owner_uid: the controller's
  std::string storage_class, volume_name;
  bool bind_completed = false, lost = false, deleting = false;
  int64_t request = 0;  // bytes of storage
  uint8_t access_modes = 0;
  bool block = false;
  std::optional<LabelSelector> selector;
  std::string selected_node;  // volume.kubernetes.io/selected-node
  // Selected by pods this scheduler placed, until the API says.
  std::string assumed_node;
  int assumed_refs = 0;

  bool FullyBound() const { return !volume_name.empty() && bind_completed; }
  const std::string& SelectedNode() const { return selected_node.empty() ? assumed_node : selected_node; }
  bool operator==(const ClaimInfo&) const = default;
};

struct StorageClassInfo {
  std::string name, provisioner;
  bool wait_for_first_consumer = false;
  std::vector<NodeSelectorTerm> allowed_topologies;  // ORed; none: every node
  bool operator==(const StorageClassInfo&) const = default;
};

absl::StatusOr<PersistentVolumeInfo> ParsePersistentVolume(const json& obj);
absl::StatusOr<ClaimInfo> ParsePersistentVolumeClaim(const json& obj);
absl::StatusOr<StorageClassInfo> ParseStorageClass(const json& obj);
// The claims of a pod's spec.volumes; `pod_name` names ephemeral ones.
absl::StatusOr<std::vector<PodClaim>> ParsePodClaims(const json& spec, const Fields& f, const std::string& pod_name);

// kube's reasons for a node the pod's volumes do not fit (all unresolvable).
inline constexpr char kVolumeNodeConflict[] = "node(s) didn't match PersistentVolume's node affinity";
inline constexpr char kVolumeBindConflict[] = "node(s) didn't find available persistent volumes to bind";
inline constexpr char kVolumePvNotExist[] = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)";

class Volumes {
 public:
  // Whether an upsert changed what the scheduler reads. Assumptions survive
  // an object that does not show the claimRef or selected node yet.
  bool Upsert(PersistentVolumeInfo pv);
  bool Upsert(ClaimInfo claim);
  bool Upsert(StorageClassInfo sc);
  void DeleteVolume(const std::string& name);
  void DeleteClaim(const std::string& key);
  void DeleteClass(const std::string& name);

  // kube's PreFilter: why the pod cannot be placed on any node (a claim
  // missing, lost, being deleted, or unbound of an Immediate class), or "".
  std::string PreCheck(const TaskInfo& t) const;
  // kube's Filter on one node: appends the reasons it fails (none: it fits)
  // and, with `choices`, what binding the pod there takes.
  void Check(const TaskInfo& t, const NodeInfo& n, std::vector<std::string>* reasons,
             VolumeChoices* choices = nullptr) const;
  // Takes the choices for the pod placed on `node` (t.volume_choices), or
  // gives them back.
  void Reserve(TaskInfo* t, const NodeInfo& n);
  void Revert(TaskInfo* t);

  const ClaimInfo* FindClaim(const std::string& key) const;

 private:
  struct Sorted {
    std::vector<const ClaimInfo*> bound, delayed;
  };
  // The pod's claims by kind; false (and `why`) when PreCheck would fail.
  bool Sort(const TaskInfo& t, Sorted* out, std::string* why) const;
  // The smallest PV for the claim on the node (kube's FindMatchingVolume), or nullptr.
  const PersistentVolumeInfo* Match(const ClaimInfo& c, const NodeInfo& n, const VolumeChoices& taken) const;
  // Whether the claim may be provisioned on the node; "" or why not (an error).
  bool Provisionable(const ClaimInfo& c, const NodeInfo& n, std::string* error) const;

  absl::btree_map<std::string, PersistentVolumeInfo> volumes_;
  absl::flat_hash_map<std::string, absl::btree_set<std::string>> volumes_by_class_;
  absl::flat_hash_map<std::string, ClaimInfo> claims_;
  absl::flat_hash_map<std::string, StorageClassInfo> classes_;
};

}  // namespace volcanic
