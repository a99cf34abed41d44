// Per-queue job orders in a session (volcanic's own; api/job_order.h and
// docs/queues.md, "A job order per queue").
//
// Two jobs of one queue whose policy (its own, else its nearest ancestor's)
// is not `tiers` are ordered by that policy alone, then by arrival:
// - fifo: arrival (creation time, then the order the scheduler saw them);
// - priority: the higher job priority first;
// - fair: the namespace with the smaller dominant share of the cluster among
//   the queue's allocations first (DRF among namespaces, kept up to date as
//   the session places and evicts);
// - sjf: jobs that waited sjf-max-wait or longer first (arrival among them),
//   then the smaller size: the dominant share of the job's minResources (else
//   its total request) in the cluster.
// Jobs of different queues, or of a queue on `tiers`, are the tiers' to order.
//
// Cost: O(queues + jobs of queues with a policy) at open; a hash lookup per
// comparison, and nothing when no queue has a policy.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "volcanic/api/types.h"

namespace volcanic {

// Arrival: creation time, then the order the cache first saw the jobs, then
// the key (Volcano goes from creation time to UID; creation times are whole
// seconds, so volcanic puts the cache's arrival order between: first come,
// first served; docs/scheduler.md). The last word of every job order.
bool ArrivedBefore(const JobInfo& l, const JobInfo& r);

class QueueJobOrders {
 public:
  // `wake`: called with the instant (ms) a job crosses an sjf age bound.
  QueueJobOrders(const absl::btree_map<std::string, const QueueInfo*>& queues,
                 const std::vector<std::pair<std::string_view, JobInfo*>>& jobs, const Resource& total,
                 int64_t now_ms, const std::function<void(int64_t)>& wake);

  // Whether l goes before r by their queue's policy; nullopt: the tiers decide.
  std::optional<bool> First(const JobInfo& l, const JobInfo& r) const;
  // The task's status changed from `before`: fair's namespace shares follow.
  void StatusChanged(const TaskInfo& task, TaskStatus before);

  // The policy queue `name` resolves to (its own, else its ancestors').
  static QueueJobOrder Resolve(const absl::btree_map<std::string, const QueueInfo*>& queues, const std::string& name);

 private:
  struct Namespace {  // fair: one namespace's allocation in one queue
    Resource allocated;
    double share = 0;
  };
  struct JobState {
    JobOrderPolicy policy;
    Namespace* ns = nullptr;  // fair
    bool aged = false;        // sjf: waited past the bound
    double size = 0;          // sjf
  };

  const Resource& total_;
  absl::node_hash_map<std::pair<std::string, std::string>, Namespace> namespaces_;  // (queue, ns)
  absl::flat_hash_map<const JobInfo*, JobState> jobs_;
};

}  // namespace volcanic
