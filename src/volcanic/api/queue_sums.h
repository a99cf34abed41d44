// Sums over a queue's live jobs, kept by the cache as the jobs change, so a
// session opens over its queues rather than over every job: proportion's
// allocated, request, inqueue and elastic, overcommit's inqueue, and the
// allocated of the queue status all come from here (reference §4.6).
#pragma once

#include <string>

#include "absl/container/btree_map.h"
#include "volcanic/api/resource.h"

namespace volcanic {

// One job's terms, or a queue's sums of its jobs' terms.
struct QueueSums {
  int jobs = 0;                 // jobs counted (a job's own terms: 1, or 0 when it takes no part)
  Resource allocated;           // requests of allocated tasks
  Resource request;             // allocated plus the requests of Pending tasks
  Resource inqueue;             // proportion: what admitted jobs still reserve of minResources
  Resource elastic;             // proportion: allocated above minResources
  Resource overcommit_inqueue;  // overcommit's rule for the same reservation
  void Add(const QueueSums& o, int sign);
};

// By queue name; a queue is listed while it has a counted job.
using QueueSumsTable = absl::btree_map<std::string, QueueSums>;

// A job's place in the cache's table: the terms it counts there, replaced as
// the job changes. The link belongs to the JobInfo object the cache made: a
// copy is unlinked, assigning to a job keeps its link (the caller recounts),
// and destroying the job takes its terms out.
class QueueSumsLink {
 public:
  QueueSumsLink() = default;
  QueueSumsLink(const QueueSumsLink&) {}
  QueueSumsLink& operator=(const QueueSumsLink&) { return *this; }
  ~QueueSumsLink() { Count(queue_, QueueSums()); }

  void Link(QueueSumsTable* table) { table_ = table; }
  bool linked() const { return table_ != nullptr; }
  // What the job counts from now on: `terms`, in `queue`'s sums.
  void Count(const std::string& queue, QueueSums terms);

 private:
  QueueSumsTable* table_ = nullptr;
  std::string queue_;
  QueueSums counted_;
};

}  // namespace volcanic
