// QueueBinding limits in a session (volcanic's own; docs/queues.md).
//
// A queue with QueueBindings takes jobs only from the namespaces they bind,
// and each binding's limits cap every namespace it binds, in that queue:
// - maxPendingJobs: the namespace's jobs enqueued and not yet running
//   (PodGroup phase Inqueue). One more is not enqueued: it stays Pending.
// - maxRunningPods: the namespace's pods holding resources (allocated,
//   pipelined, binding, bound or running; not releasing). A job is enqueued
//   only if its minAvailable pods fit beside those and the pods Inqueue jobs
//   still need for their own minAvailable; a pod is not allocated past it.
// A refused job's reason names the binding, the limit and the counts
// (Session::Explain); so does a refused pod's (its PodScheduled message).
// Queues without a binding are untouched: Volcano's behaviour.
//
// Cost: O(jobs of bound queues) at open; O(bindings of the job's queue) per
// check or placement, and nothing at all without QueueBindings.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "volcanic/api/queue_binding.h"
#include "volcanic/api/types.h"

namespace volcanic {

class Cache;

class QueueBindingLimits {
 public:
  QueueBindingLimits(const Cache& cache, const std::vector<std::pair<std::string_view, JobInfo*>>& jobs);

  // Why the job may not be enqueued now, or nullopt.
  std::optional<std::string> EnqueueRefusal(const JobInfo& job) const;
  // The job was enqueued: it counts as pending and reserves its minAvailable.
  void Enqueued(const JobInfo& job);
  // Why the task may not take resources now, or nullopt.
  std::optional<std::string> AllocateRefusal(const TaskInfo& task) const;
  // The task's status changed from `before` in the session (it may have
  // taken or given back resources).
  void StatusChanged(const TaskInfo& task, TaskStatus before);

 private:
  // One namespace's usage of its queue, as one binding counts it.
  struct Usage {
    int64_t running_pods = 0;   // pods holding resources
    int64_t pending_jobs = 0;   // Inqueue jobs
    int64_t reserved_pods = 0;  // pods Inqueue jobs still need for minAvailable
  };
  struct Entry {
    const QueueBinding* binding;
    Usage* usage;
  };
  // What applies to one job: nullptr when its queue has no binding.
  struct JobLimits {
    const std::vector<const QueueBinding*>* bindings = nullptr;  // of its queue
    std::vector<Entry> entries;  // those binding its namespace (none: unbound)
  };

  const JobLimits* Find(const JobInfo* job) const;
  JobLimits Resolve(const Cache& cache, const JobInfo& job);

  absl::flat_hash_map<std::string, std::vector<const QueueBinding*>> by_queue_;
  // (binding, namespace) -> usage; node map: Entry points into it.
  absl::node_hash_map<std::pair<const QueueBinding*, std::string>, Usage> usage_;
  absl::flat_hash_map<const JobInfo*, JobLimits> jobs_;
};

}  // namespace volcanic
