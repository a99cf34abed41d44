#include "volcanic/cache/cache.h"

#include "absl/strings/str_cat.h"
#include "volcanic/api/status_macros.h"

namespace volcanic {
namespace {

std::string KindOf(const json& obj) {
  if (!obj.is_object() || !obj.contains("kind") || !obj["kind"].is_string()) return "";
  return obj["kind"].get<std::string>();
}

bool Terminal(TaskStatus s) { return In(s, kCompletedMask); }

// Stores `value` under `key`: kUnchanged when it is what was there.
template <typename T>
Cache::Change Replace(absl::btree_map<std::string, T>& map, const std::string& key, T value) {
  auto [it, added] = map.try_emplace(key, value);
  if (!added && it->second == value) return Cache::Change::kUnchanged;
  it->second = std::move(value);
  return Cache::Change::kChanged;
}

// Whether two parses of an object give the scheduler the same view: every
// field read from the object (what is derived from them follows; a pod's
// placement follows its class key). Accounting the cache keeps is not read.
bool SameView(const TaskInfo& a, const TaskInfo& b) {
  return a.uid == b.uid && a.job_key == b.job_key && a.implicit_group == b.implicit_group && a.role == b.role &&
         a.index == b.index && a.resreq == b.resreq && a.priority == b.priority && a.preemptable == b.preemptable &&
         a.priority_class_name == b.priority_class_name && a.preemption_policy == b.preemption_policy &&
         a.creation_ms == b.creation_ms && a.start_ms == b.start_ms && a.scheduled_ms == b.scheduled_ms &&
         a.labels == b.labels &&
         a.annotations == b.annotations && a.class_key == b.class_key && a.status == b.status && a.node_name == b.node_name &&
         a.observed_status == b.observed_status && a.observed_node == b.observed_node && a.assumed == b.assumed &&
         a.guaranteed == b.guaranteed && a.container_cpus == b.container_cpus &&
         a.terminating == b.terminating && a.gated == b.gated && a.queue_gate_only == b.queue_gate_only &&
         a.claims == b.claims;
}

bool SameView(const JobInfo& a, const JobInfo& b) {
  return a.uid == b.uid && a.has_podgroup == b.has_podgroup && a.queue == b.queue &&
         a.priority_class_name == b.priority_class_name && a.min_available == b.min_available &&
         a.min_task_member == b.min_task_member && a.min_resources == b.min_resources &&
         a.quota_request == b.quota_request && a.phase == b.phase && a.conditions == b.conditions && a.status_phase == b.status_phase &&
         a.status_conditions == b.status_conditions && a.status_counts == b.status_counts &&
         a.status_known == b.status_known && a.creation_ms == b.creation_ms && a.preemptable == b.preemptable &&
         a.labels == b.labels && a.annotations == b.annotations && a.network_topology == b.network_topology &&
         a.sub_group_policies == b.sub_group_policies;
}

bool SameView(const QueueInfo& a, const QueueInfo& b) {
  return a.name == b.name && a.uid == b.uid && a.parent == b.parent && a.status_allocated == b.status_allocated &&
         a.weight == b.weight && a.priority == b.priority && a.capability == b.capability &&
         a.deserved == b.deserved && a.guarantee == b.guarantee && a.reclaimable == b.reclaimable &&
         a.state == b.state && a.creation_ms == b.creation_ms && a.hierarchy == b.hierarchy &&
         a.hierarchy_weights == b.hierarchy_weights && a.affinity == b.affinity && a.job_order == b.job_order;
}

bool SameView(const NodeInfo& a, const NodeInfo& b) {
  return a.has_object == b.has_object && a.labels == b.labels && a.annotations == b.annotations &&
         a.taints == b.taints && a.unschedulable == b.unschedulable && a.ready_condition == b.ready_condition &&
         a.max_pods == b.max_pods && a.allocatable == b.allocatable && a.capacity == b.capacity;
}

}  // namespace

Cache::Cache(ParseOptions opts) : opts_(std::move(opts)) { EnsureDefaultQueues(); }

void Cache::EnsureDefaultQueues() {
  // Volcano's cache creates these when missing (cache.go newDefaultAndRootQueue).
  if (!queues_.contains("root")) {
    QueueInfo root;
    root.name = root.uid = "root";
    root.reclaimable = false;
    queues_.emplace("root", root);
  }
  if (!queues_.contains(opts_.default_queue)) {
    QueueInfo def;
    def.name = def.uid = opts_.default_queue;
    queues_.emplace(def.name, def);
  }
}

absl::StatusOr<Cache::Change> Cache::Upsert(const json& obj) {
  std::string kind = KindOf(obj);
  if (kind == "Pod") return UpsertPod(obj);
  if (kind == "Node") return UpsertNode(obj);
  if (kind == "PodGroup") return UpsertPodGroup(obj);
  if (kind == "Queue") return UpsertQueue(obj);
  if (kind == "HyperNode") return UpsertHyperNode(obj);
  if (kind == "PodDisruptionBudget") {
    ASSIGN_OR_RETURN(DisruptionBudget b, ParsePodDisruptionBudget(obj));
    std::string key = b.ns + "/" + b.name;  // before b is moved from
    return Replace(disruption_budgets_, key, std::move(b));
  }
  if (kind == "Numatopology") {
    ASSIGN_OR_RETURN(NumaTopology t, ParseNumatopology(obj));
    std::string name = t.name;
    return numa_nodes_[name].Report(std::move(t)) ? Change::kChanged : Change::kUnchanged;
  }
  if (kind == "ResourceQuota") {
    ASSIGN_OR_RETURN(QuotaStatus q, ParseResourceQuota(obj));
    std::string key = q.ns + "/" + q.name;
    return Replace(resource_quotas_, key, std::move(q));
  }
  if (kind == "QueueBinding") {
    ASSIGN_OR_RETURN(QueueBinding b, ParseQueueBinding(obj));
    std::string name = b.name;
    return Replace(queue_bindings_, name, std::move(b));
  }
  if (kind == "PriorityClass") {
    ASSIGN_OR_RETURN(PriorityClassInfo pc, ParsePriorityClass(obj));
    priority_classes_[pc.name] = std::move(pc);
  } else if (kind == "Namespace") {
    ASSIGN_OR_RETURN(auto ns, ParseNamespace(obj));
    namespace_labels_[ns.first] = std::move(ns.second);
  } else if (kind == "PersistentVolume") {
    ASSIGN_OR_RETURN(auto pv, ParsePersistentVolume(obj));
    return volumes_.Upsert(std::move(pv)) ? Change::kChanged : Change::kUnchanged;
  } else if (kind == "PersistentVolumeClaim") {
    ASSIGN_OR_RETURN(auto claim, ParsePersistentVolumeClaim(obj));
    return volumes_.Upsert(std::move(claim)) ? Change::kChanged : Change::kUnchanged;
  } else if (kind == "StorageClass") {
    ASSIGN_OR_RETURN(auto sc, ParseStorageClass(obj));
    return volumes_.Upsert(std::move(sc)) ? Change::kChanged : Change::kUnchanged;
  } else {
    if (!obj.is_object()) return absl::InvalidArgumentError("object: must be a JSON object");
    if (obj.contains("kind") && !obj["kind"].is_string() && !obj["kind"].is_null())
      return absl::InvalidArgumentError("object: kind: must be a string");
    return Change::kIgnored;
  }
  return Change::kChanged;
}

absl::StatusOr<Cache::Change> Cache::UpsertQueue(const json& obj) {
  ASSIGN_OR_RETURN(QueueInfo q, ParseQueue(obj));
  auto it = queues_.find(q.name);
  if (it != queues_.end() && SameView(it->second, q)) return Change::kUnchanged;
  queues_[q.name] = std::move(q);
  return Change::kChanged;
}

absl::StatusOr<Cache::Change> Cache::UpsertPod(const json& obj) {
  ASSIGN_OR_RETURN(TaskInfo parsed, ParsePod(obj, opts_));
  AcquireClass(parsed);
  auto it = tasks_.find(parsed.key);
  if (it != tasks_.end()) {
    TaskInfo* old = it->second.get();
    // Keep what this scheduler decided until the object shows it happened.
    if (old->assumed == Assumed::kBind && parsed.node_name.empty() &&
        parsed.status == TaskStatus::kPending) {
      parsed.status = TaskStatus::kBinding;
      parsed.node_name = old->node_name;
      parsed.assumed = Assumed::kBind;
      if (parsed.gpu_grants.empty()) parsed.gpu_grants = old->gpu_grants;
      parsed.volume_choices = old->volume_choices;
    } else if (old->assumed == Assumed::kEvict && !parsed.terminating && !Terminal(parsed.status)) {
      parsed.status = TaskStatus::kReleasing;
      parsed.assumed = Assumed::kEvict;
    }
    if (SameView(*old, parsed)) {
      ReleaseClass(parsed.class_id);  // the class acquired for the parse
      return Change::kUnchanged;
    }
    int32_t old_class = old->class_id;
    DetachTask(old);
    *old = std::move(parsed);
    AttachTask(old);
    ReleaseClass(old_class);
    return Change::kChanged;
  }
  auto t = std::make_unique<TaskInfo>(std::move(parsed));
  TaskInfo* raw = t.get();
  tasks_.emplace(raw->key, std::move(t));
  AttachTask(raw);
  if (raw->job && raw->job->tasks.size() == static_cast<size_t>(raw->job->min_available)) ++gangs_filled_;
  return Change::kChanged;
}

void Cache::AcquireClass(TaskInfo& t) {
  auto [it, inserted] = class_ids_.try_emplace(t.class_key, -1);
  if (inserted) {
    if (free_class_ids_.empty()) {
      it->second = static_cast<int32_t>(classes_.size());
      classes_.emplace_back();
    } else {
      it->second = *free_class_ids_.begin();
      free_class_ids_.erase(free_class_ids_.begin());
    }
    classes_[it->second] = TaskClass{t.class_key, t.placement, 0};
  }
  TaskClass& c = classes_[it->second];
  ++c.pods;
  t.class_id = it->second;
  t.placement = c.placement;  // pods of one class have equal placements: share one
}

void Cache::ReleaseClass(int32_t id) {
  TaskClass& c = classes_[id];
  if (--c.pods > 0) return;
  class_ids_.erase(c.key);
  c = TaskClass{};
  free_class_ids_.insert(id);
}

const Labels& Cache::NamespaceLabels(const std::string& ns) const {
  static const Labels kNone;
  auto it = namespace_labels_.find(ns);
  return it == namespace_labels_.end() ? kNone : it->second;
}

void Cache::AttachTask(TaskInfo* t) {
  if (t->placement && !t->placement->pod_anti_affinity.empty()) anti_affinity_tasks_.insert(t);
  if (!t->node_name.empty() && !Terminal(t->status)) {
    auto& node = nodes_[t->node_name];
    if (!node) {
      node = std::make_unique<NodeInfo>();
      node->name = t->node_name;  // placeholder until the Node arrives
    }
    node->AddTask(t);
    t->node = node.get();
  }
  if (!t->job_key.empty()) {
    auto& job = jobs_[t->job_key];
    if (!job) {
      job = std::make_unique<JobInfo>();
      job->arrival = ++arrivals_;
      job->key = t->job_key;
      job->ns = t->ns;
      job->name = t->job_key.substr(t->ns.size() + 1);
      job->uid = job->key;
      if (t->implicit_group && opts_.bare_pods_as_groups) {
        // What Volcano's PodGroup controller would create for a bare pod.
        job->implicit = true;
        job->min_available = 1;
        job->queue = opts_.default_queue;
        job->priority_class_name = t->priority_class_name;
        job->creation_ms = t->creation_ms;
      }
      job->queue_sums.Link(&queue_sums_);
    }
    job->AddTask(t);
    t->job = job.get();
  }
}

void Cache::DetachTask(TaskInfo* t) {
  anti_affinity_tasks_.erase(t);
  if (t->node) {
    t->node->RemoveTask(t);
    DropNodeIfEmpty(t->node->name);
    t->node = nullptr;
  }
  if (t->job) {
    t->job->RemoveTask(t);
    DropJobIfEmpty(t->job->key);
    t->job = nullptr;
  }
}

void Cache::DropJobIfEmpty(const std::string& key) {
  auto it = jobs_.find(key);
  if (it != jobs_.end() && it->second->tasks.empty() && !it->second->has_podgroup) jobs_.erase(it);
}

void Cache::DropNodeIfEmpty(const std::string& name) {
  auto it = nodes_.find(name);
  if (it != nodes_.end() && it->second->tasks.empty() && !it->second->has_object) nodes_.erase(it);
}

absl::StatusOr<Cache::Change> Cache::SetNodeUsage(const std::string& node, const NodeUsage& usage) {
  NodeInfo* n = FindNode(node);
  if (!n || !n->has_object) return absl::NotFoundError(absl::StrCat("node \"", node, "\" is not in the cache"));
  if (n->usage == usage) return Change::kUnchanged;
  n->usage = usage;
  return Change::kChanged;
}

absl::StatusOr<Cache::Change> Cache::UpsertNode(const json& obj) {
  ASSIGN_OR_RETURN(NodeInfo parsed, ParseNode(obj));
  auto& node = nodes_[parsed.name];
  if (!node) {
    node = std::make_unique<NodeInfo>(std::move(parsed));
    ready_nodes_stale_ = true;
    return Change::kChanged;
  }
  if (SameView(*node, parsed)) return Change::kUnchanged;
  ready_nodes_stale_ = true;
  // Keep the tasks and their accounting; replace what the object says.
  node->has_object = true;
  node->labels = std::move(parsed.labels);
  node->annotations = std::move(parsed.annotations);
  node->taints = std::move(parsed.taints);
  node->unschedulable = parsed.unschedulable;
  node->ready_condition = parsed.ready_condition;
  node->max_pods = parsed.max_pods;
  node->SetAllocatable(std::move(parsed.allocatable));
  node->capacity = std::move(parsed.capacity);
  node->SetGpus(std::move(parsed.gpus));
  node->resource_names = std::move(parsed.resource_names);
  return Change::kChanged;
}

absl::StatusOr<Cache::Change> Cache::UpsertPodGroup(const json& obj) {
  ASSIGN_OR_RETURN(JobInfo parsed, ParsePodGroup(obj, opts_));
  parsed.has_podgroup = true;
  auto& job = jobs_[parsed.key];
  if (!job) {
    parsed.arrival = ++arrivals_;
    job = std::make_unique<JobInfo>(std::move(parsed));
    job->queue_sums.Link(&queue_sums_);
    job->Recount();
    return Change::kChanged;
  }
  if (SameView(*job, parsed)) return Change::kUnchanged;
  // Same object, so tasks keep pointing at it; keep tasks, accounting, the
  // arrival order and what the last session saw.
  parsed.arrival = job->arrival;
  parsed.tasks_seen = job->tasks_seen;
  parsed.last_event = std::move(job->last_event);
  parsed.TakeTasks(std::move(*job));
  *job = std::move(parsed);  // keeps the job's link to the queue sums
  job->Recount();
  return Change::kChanged;
}

absl::StatusOr<Cache::Change> Cache::UpsertHyperNode(const json& obj) {
  ASSIGN_OR_RETURN(HyperNodeSpec spec, ParseHyperNode(obj));
  auto it = hypernode_specs_.find(spec.name);
  if (it != hypernode_specs_.end() && it->second == spec) return Change::kUnchanged;
  hypernode_specs_[spec.name] = std::move(spec);
  hypernode_tree_stale_ = true;
  return Change::kChanged;
}

const HyperNodeTree& Cache::HyperNodes() {
  if (ready_nodes_stale_) IndexReadyNodes();
  if (hypernode_tree_stale_) {
    hypernode_tree_.Build(hypernode_specs_, ready_nodes_);
    hypernode_tree_stale_ = false;
  }
  return hypernode_tree_;
}

absl::Status Cache::Delete(const std::string& kind, const std::string& name, const std::string& ns) {
  std::string key = (ns.empty() ? "default" : ns) + "/" + name;
  if (kind == "Pod") {
    DeleteTask(key);
  } else if (kind == "Node") {
    auto it = nodes_.find(name);
    if (it != nodes_.end()) {
      it->second->has_object = false;
      ready_nodes_stale_ = true;
      DropNodeIfEmpty(name);
    }
  } else if (kind == "PodGroup") {
    auto it = jobs_.find(key);
    if (it != jobs_.end()) {
      JobInfo& job = *it->second;
      job.has_podgroup = false;
      job.implicit = false;
      job.Recount();
      DropJobIfEmpty(key);
    }
  } else if (kind == "Queue") {
    queues_.erase(name);
    EnsureDefaultQueues();
  } else if (kind == "PriorityClass") {
    priority_classes_.erase(name);
  } else if (kind == "HyperNode") {
    hypernode_tree_stale_ |= hypernode_specs_.erase(name) > 0;
  } else if (kind == "PodDisruptionBudget") {
    disruption_budgets_.erase(key);
  } else if (kind == "ResourceQuota") {
    resource_quotas_.erase(key);
  } else if (kind == "QueueBinding") {
    queue_bindings_.erase(name);
  } else if (kind == "Numatopology") {
    numa_nodes_.erase(name);
  } else if (kind == "Namespace") {
    namespace_labels_.erase(name);
  } else if (kind == "PersistentVolume") {
    volumes_.DeleteVolume(name);
  } else if (kind == "PersistentVolumeClaim") {
    volumes_.DeleteClaim(key);
  } else if (kind == "StorageClass") {
    volumes_.DeleteClass(name);
  }
  return absl::OkStatus();
}

void Cache::DeleteTask(const std::string& key) {
  auto it = tasks_.find(key);
  if (it == tasks_.end()) return;
  DetachTask(it->second.get());
  ReleaseClass(it->second->class_id);
  tasks_.erase(it);
}

absl::Status Cache::Forget(const std::string& key) {
  TaskInfo* t = FindTask(key);
  if (!t) return absl::NotFoundError(absl::StrCat("pod ", key, " is not in the cache"));
  if (t->assumed == Assumed::kNone) return absl::OkStatus();
  DetachTask(t);
  t->status = t->observed_status;
  t->node_name = t->observed_node;
  t->assumed = Assumed::kNone;
  t->gpu_grants = GrantsOf(t->annotations);  // the cards the object says, not the session's
  volumes_.Revert(t);
  AttachTask(t);
  return absl::OkStatus();
}

void Cache::AssumeBind(TaskInfo* t) {
  SetTaskStatus(t, TaskStatus::kBinding);
  t->assumed = Assumed::kBind;
}

void Cache::AssumeEvict(TaskInfo* t) {
  SetTaskStatus(t, TaskStatus::kReleasing);
  t->assumed = Assumed::kEvict;
}

const std::vector<NodeInfo*>& Cache::ReadyNodes() {
  if (ready_nodes_stale_) IndexReadyNodes();
  return ready_nodes_;
}

const std::vector<NodeInfo*>& Cache::TaintedReadyNodes() {
  if (ready_nodes_stale_) IndexReadyNodes();
  return tainted_ready_nodes_;
}

const Resource& Cache::ReadyUsed() {
  if (ready_nodes_stale_) IndexReadyNodes();
  return ready_totals_.used;
}

const Resource& Cache::ReadyAllocatable() {
  if (ready_nodes_stale_) IndexReadyNodes();
  return ready_allocatable_;
}

void Cache::TrimNodeChanges(size_t limit) {
  if (ready_totals_.changes.size() <= limit) return;
  ready_totals_.changes.clear();
  ++node_generation_;
}

void Cache::IndexReadyNodes() {
  ready_totals_ = ReadyTotals();
  ++node_generation_;
  ready_nodes_.clear();
  tainted_ready_nodes_.clear();
  ready_allocatable_ = Resource();
  for (const auto& [name, node] : nodes_) {
    node->index = node->Ready() ? static_cast<int>(ready_nodes_.size()) : -1;
    node->ready_totals = node->index >= 0 ? &ready_totals_ : nullptr;
    if (node->index < 0) continue;
    ready_nodes_.push_back(node.get());
    if (!node->taints.empty()) tainted_ready_nodes_.push_back(node.get());
    ready_allocatable_ += node->allocatable;
    ready_totals_.used += node->used;
  }
  ready_nodes_stale_ = false;
  hypernode_tree_stale_ = true;
}

NodeInfo* Cache::FindNode(const std::string& name) const {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : it->second.get();
}

QueueInfo* Cache::FindQueue(const std::string& name) {
  auto it = queues_.find(name);
  return it == queues_.end() ? nullptr : &it->second;
}

JobInfo* Cache::FindJob(const std::string& key) const {
  auto it = jobs_.find(key);
  return it == jobs_.end() ? nullptr : it->second.get();
}

TaskInfo* Cache::FindTask(const std::string& key) const {
  auto it = tasks_.find(key);
  return it == tasks_.end() ? nullptr : it->second.get();
}

}  // namespace volcanic
