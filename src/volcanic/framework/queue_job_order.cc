#include "volcanic/framework/queue_job_order.h"

namespace volcanic {

bool ArrivedBefore(const JobInfo& l, const JobInfo& r) {
  if (l.creation_ms != r.creation_ms) return l.creation_ms < r.creation_ms;
  if (l.arrival != r.arrival) return l.arrival < r.arrival;
  return l.key < r.key;
}

QueueJobOrder QueueJobOrders::Resolve(const absl::btree_map<std::string, const QueueInfo*>& queues,
                                      const std::string& name) {
  auto it = queues.find(name);
  // Up the parents; a chain longer than the queues is a cycle (admission refuses one).
  for (size_t depth = 0; it != queues.end() && depth <= queues.size(); ++depth) {
    const QueueInfo& q = *it->second;
    if (q.job_order.set) return q.job_order;
    if (q.parent.empty() || q.parent == q.name) break;
    it = queues.find(q.parent);
  }
  return QueueJobOrder{};
}

QueueJobOrders::QueueJobOrders(const absl::btree_map<std::string, const QueueInfo*>& queues,
                               const std::vector<std::pair<std::string_view, JobInfo*>>& jobs,
                               const Resource& total, int64_t now_ms, const std::function<void(int64_t)>& wake)
    : total_(total) {
  absl::flat_hash_map<std::string, QueueJobOrder> orders;
  for (const auto& [name, q] : queues) {
    QueueJobOrder order = Resolve(queues, name);
    if (order.policy != JobOrderPolicy::kTiers) orders.emplace(name, order);
  }
  if (orders.empty()) return;
  for (const auto& [key, job] : jobs) {
    auto it = orders.find(job->queue);
    if (it == orders.end()) continue;
    const QueueJobOrder& order = it->second;
    JobState state{order.policy};
    if (order.policy == JobOrderPolicy::kFair) {
      state.ns = &namespaces_[{job->queue, job->ns}];
      state.ns->allocated += job->allocated;
    } else if (order.policy == JobOrderPolicy::kSjf) {
      int64_t aged_at = job->creation_ms + order.sjf_max_wait_ms;
      state.aged = now_ms >= aged_at;
      if (!state.aged) wake(aged_at);
      state.size = DominantShare(job->min_resources ? *job->min_resources : job->total_request, total);
    }
    jobs_.emplace(job, state);
  }
  for (auto& [key, ns] : namespaces_) ns.share = DominantShare(ns.allocated, total);
}

std::optional<bool> QueueJobOrders::First(const JobInfo& l, const JobInfo& r) const {
  if (jobs_.empty()) return std::nullopt;
  auto li = jobs_.find(&l);
  if (li == jobs_.end()) return std::nullopt;
  auto ri = jobs_.find(&r);
  if (ri == jobs_.end() || l.queue != r.queue) return std::nullopt;
  const JobState& a = li->second;
  const JobState& b = ri->second;
  switch (a.policy) {
    case JobOrderPolicy::kPriority:
      if (l.priority != r.priority) return l.priority > r.priority;
      break;
    case JobOrderPolicy::kFair:
      if (a.ns->share != b.ns->share) return a.ns->share < b.ns->share;
      break;
    case JobOrderPolicy::kSjf:
      if (a.aged != b.aged) return a.aged;
      if (!a.aged && a.size != b.size) return a.size < b.size;
      break;
    case JobOrderPolicy::kFifo:
    case JobOrderPolicy::kTiers:
      break;
  }
  return ArrivedBefore(l, r);
}

void QueueJobOrders::StatusChanged(const TaskInfo& task, TaskStatus before) {
  if (jobs_.empty() || !task.job) return;
  auto it = jobs_.find(task.job);
  if (it == jobs_.end() || !it->second.ns) return;
  bool holds = Mask(task.status) & kHoldingMask;
  if (holds == static_cast<bool>(Mask(before) & kHoldingMask)) return;
  Namespace& ns = *it->second.ns;
  if (holds) {
    ns.allocated += task.resreq;
  } else {
    ns.allocated -= task.resreq;
  }
  ns.share = DominantShare(ns.allocated, total_);
}

}  // namespace volcanic
