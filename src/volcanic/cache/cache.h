// The scheduler's incremental cluster cache (Volcano's SchedulerCache).
//
// Promises: Upsert/Delete apply one object in O(size of the object + log n);
// node and job accounting stay exact after every call. A failed Upsert
// changes nothing. Sessions work on the cache in place (no copy): what a
// session commits (binds, evictions, PodGroup phases) stays "assumed" until
// an upsert of the object confirms or replaces it, or Forget drops it.
// Objects of kinds the scheduler does not use are ignored.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "volcanic/api/namespace_policy.h"
#include "volcanic/api/numa.h"
#include "volcanic/api/parse.h"
#include "volcanic/api/queue_binding.h"
#include "volcanic/api/types.h"
#include "volcanic/cache/hypernode_tree.h"

namespace volcanic {

class Cache {
 public:
  explicit Cache(ParseOptions opts = {});

  // What an Upsert did to the scheduler's view: a loop needs a session only
  // after a change (sessions are deterministic: the same view, the same
  // decisions).
  enum class Change { kIgnored, kUnchanged, kChanged };
  // Adds or replaces an object by kind and key. kIgnored for kinds the
  // scheduler does not read; kUnchanged when everything the scheduler reads
  // of the object is as it was (a status it does not read, a resourceVersion,
  // the echo of a write it decided and assumed).
  absl::StatusOr<Change> Upsert(const json& obj);
  // Removes an object; removing a missing object is not an error.
  absl::Status Delete(const std::string& kind, const std::string& name, const std::string& ns);
  // Drops what a session assumed about the pod; NotFound for an unknown pod.
  absl::Status Forget(const std::string& task_key);

  // Session commits.
  void AssumeBind(TaskInfo* t);   // Allocated -> Binding
  void AssumeEvict(TaskInfo* t);  // -> Releasing

  const absl::btree_map<std::string, std::unique_ptr<NodeInfo>>& nodes() const { return nodes_; }
  const absl::btree_map<std::string, std::unique_ptr<JobInfo>>& jobs() const { return jobs_; }
  const absl::btree_map<std::string, QueueInfo>& queues() const { return queues_; }
  // Sums over each queue's schedulable jobs (queue_sums.h), kept as jobs change.
  const QueueSumsTable& queue_sums() const { return queue_sums_; }
  // PersistentVolumes, claims and StorageClasses, with what sessions assumed.
  Volumes& volumes() { return volumes_; }
  const Volumes& volumes() const { return volumes_; }
  const absl::flat_hash_map<std::string, PriorityClassInfo>& priority_classes() const {
    return priority_classes_;
  }
  // PodDisruptionBudgets and ResourceQuotas by "ns/name" (so a namespace's
  // are adjacent), for the pdb and resourcequota plugins.
  const absl::btree_map<std::string, DisruptionBudget>& disruption_budgets() const { return disruption_budgets_; }
  const absl::btree_map<std::string, QuotaStatus>& resource_quotas() const { return resource_quotas_; }
  // QueueBindings by name (api/queue_binding.h), whose limits sessions keep
  // (framework/queue_binding_limits.h).
  const absl::btree_map<std::string, QueueBinding>& queue_bindings() const { return queue_bindings_; }
  // NUMA layouts by node name (Numatopology objects; api/numa.h), which the
  // numa-aware plugin refreshes at session open and assigns CPUs of at close.
  absl::btree_map<std::string, NumaNode>& numa_nodes() { return numa_nodes_; }
  // When (session clock, ms) a plugin last did its periodic work (tdm's
  // look for victims on closed revocable zones, rescheduling's runs), by
  // plugin name; nullopt: never. It must outlive a session (Volcano keeps it
  // in a package global), and belongs to this scheduler, not the process.
  std::optional<int64_t>& last_run_ms(const std::string& plugin) { return last_run_ms_[plugin]; }
  // Records a node's load from the metrics system (NodeInfo::usage).
  // NotFound for a node the cache does not have; kUnchanged when it is what
  // the node had.
  absl::StatusOr<Change> SetNodeUsage(const std::string& node, const NodeUsage& usage);
  // The Ready nodes by name, each NodeInfo::index its position there (-1 for
  // the others), and the sum of their allocatable: what a session opens over,
  // rebuilt only after a node came, went or changed (O(1) otherwise).
  const std::vector<NodeInfo*>& ReadyNodes();
  // The Ready nodes with a taint, in ReadyNodes' order: what taint-aware
  // plugins walk instead of every node (most clusters taint few).
  const std::vector<NodeInfo*>& TaintedReadyNodes();
  const Resource& ReadyAllocatable();
  // Every accounting change of a Ready node since `node_generation()` began, as
  // the node's index in ReadyNodes (repeats included), in order: what lets node
  // answers be refreshed for the changed nodes only, within a session and
  // across sessions. A new generation (the Ready nodes rebuilt, or the log
  // trimmed by TrimNodeChanges) starts an empty log and new indices.
  const std::vector<int>& node_changes() const { return ready_totals_.changes; }
  // The sum of the Ready nodes' `used`, kept as it changes.
  const Resource& ReadyUsed();
  uint64_t node_generation() const { return node_generation_; }
  // Empties the log once longer than `limit`, starting a new generation.
  void TrimNodeChanges(size_t limit);
  NodeInfo* FindNode(const std::string& name) const;
  JobInfo* FindJob(const std::string& key) const;
  QueueInfo* FindQueue(const std::string& name);
  TaskInfo* FindTask(const std::string& key) const;
  // Whether a job takes part in sessions: it has a PodGroup, or it is the
  // implicit group of one bare pod.
  static bool Schedulable(const JobInfo& job) { return job.has_podgroup || job.implicit; }
  // Labels of a Namespace object (empty when unknown), for namespaceSelectors.
  const Labels& NamespaceLabels(const std::string& ns) const;
  // Task classes of live pods (pods alike for placement share one).
  int class_count() const { return static_cast<int>(class_ids_.size()); }
  // How many times a new pod brought its gang to minAvailable pods (only
  // grows): a loop may start a session early when it does.
  uint64_t gangs_filled() const { return gangs_filled_; }
  // The HyperNodes over the Ready nodes (hypernode_tree.h), rebuilt only
  // after a HyperNode or the Ready nodes changed.
  const HyperNodeTree& HyperNodes();
  // Pods with required pod anti-affinity terms: they constrain other pods.
  const absl::flat_hash_set<const TaskInfo*>& anti_affinity_tasks() const { return anti_affinity_tasks_; }

 private:
  absl::StatusOr<Change> UpsertPod(const json& obj);
  absl::StatusOr<Change> UpsertNode(const json& obj);
  absl::StatusOr<Change> UpsertPodGroup(const json& obj);
  absl::StatusOr<Change> UpsertQueue(const json& obj);
  absl::StatusOr<Change> UpsertHyperNode(const json& obj);
  void AttachTask(TaskInfo* t);
  void DetachTask(TaskInfo* t);
  void DeleteTask(const std::string& key);
  void DropJobIfEmpty(const std::string& key);
  void DropNodeIfEmpty(const std::string& name);
  void EnsureDefaultQueues();
  void IndexReadyNodes();
  // Gives the task the id and shared placement of its class; the id is
  // reused once no live pod has the class.
  void AcquireClass(TaskInfo& t);
  void ReleaseClass(int32_t id);

  struct TaskClass {
    std::string key;
    std::shared_ptr<const Placement> placement;
    int64_t pods = 0;
  };

  ParseOptions opts_;
  absl::btree_map<std::string, std::unique_ptr<NodeInfo>> nodes_;
  QueueSumsTable queue_sums_;  // before jobs_: the jobs take their terms out as they go
  absl::btree_map<std::string, std::unique_ptr<JobInfo>> jobs_;
  absl::flat_hash_map<std::string, std::unique_ptr<TaskInfo>> tasks_;
  absl::btree_map<std::string, QueueInfo> queues_;
  absl::flat_hash_map<std::string, PriorityClassInfo> priority_classes_;
  absl::btree_map<std::string, DisruptionBudget> disruption_budgets_;
  absl::btree_map<std::string, QueueBinding> queue_bindings_;
  absl::btree_map<std::string, QuotaStatus> resource_quotas_;
  absl::btree_map<std::string, NumaNode> numa_nodes_;
  std::map<std::string, std::optional<int64_t>> last_run_ms_;  // std::map: references stay valid
  absl::flat_hash_map<std::string, int32_t> class_ids_;  // class key -> id
  std::vector<TaskClass> classes_;                       // by class id
  absl::btree_set<int32_t> free_class_ids_;              // lowest reused first
  absl::flat_hash_map<std::string, Labels> namespace_labels_;
  Volumes volumes_;
  absl::btree_map<std::string, HyperNodeSpec> hypernode_specs_;
  HyperNodeTree hypernode_tree_;
  bool hypernode_tree_stale_ = true;
  absl::flat_hash_set<const TaskInfo*> anti_affinity_tasks_;
  std::vector<NodeInfo*> ready_nodes_;
  std::vector<NodeInfo*> tainted_ready_nodes_;
  ReadyTotals ready_totals_;
  uint64_t node_generation_ = 0;
  Resource ready_allocatable_;
  bool ready_nodes_stale_ = true;
  uint64_t arrivals_ = 0;  // jobs seen so far: the next job's arrival order
  uint64_t gangs_filled_ = 0;
};

}  // namespace volcanic
