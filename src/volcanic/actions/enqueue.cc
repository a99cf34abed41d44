// enqueue (reference §4.3, research §5.3): Pending jobs become Inqueue, one
// try per job per session, queue by queue in round-robin, while the
// JobEnqueueable vote permits (always, for a job without minResources), and
// the queue's QueueBindings admit it (volcanic's own; queue_binding_limits.h).
#include "absl/container/btree_map.h"
#include "volcanic/actions/actions.h"
#include "volcanic/framework/heap.h"
#include "volcanic/framework/session.h"

namespace volcanic {
namespace {

class EnqueueAction : public Action {
 public:
  void Execute(Session& ssn) override {
    OrderedHeap<const QueueInfo*> queues([&](auto a, auto b) { return ssn.QueueOrder(*a, *b); });
    absl::btree_map<std::string, OrderedHeap<JobInfo*>> jobs;
    // Volcano also pushes the queues of jobs that are not Pending; popped, they
    // have nothing to enqueue, so only Pending jobs' queues are taken.
    for (const auto& [key, job] : ssn.jobs()) {
      if (!job->IsPending()) continue;
      const QueueInfo* q = ssn.FindQueue(job->queue);
      if (!q) continue;
      auto [it, created] = jobs.try_emplace(q->name, [&](JobInfo* a, JobInfo* b) { return ssn.JobOrder(*a, *b); });
      if (created) queues.Push(q);
      it->second.Push(job);
    }
    while (!queues.Empty()) {
      const QueueInfo* q = queues.Pop();
      auto& pending = jobs.at(q->name);
      if (pending.Empty()) continue;
      JobInfo* job = pending.Pop();
      if (!ssn.QueueBindingsAdmit(*job)) {
        // explained: the binding or limit is named
      } else if (!job->min_resources || ssn.JobEnqueueable(*job)) {
        ssn.JobEnqueued(*job);
        ssn.SetInqueue(*job);
      } else if (!ssn.Explained(*job)) {
        ssn.Explain(*job, "not enqueued: a plugin's JobEnqueueable vote refused it");
      }
      queues.Push(q);
    }
  }
};

}  // namespace

ActionOr NewEnqueueAction(const Arguments& args) {
  if (auto s = args.CheckKnown({}); !s.ok()) return s;
  return std::make_unique<EnqueueAction>();
}

}  // namespace volcanic
