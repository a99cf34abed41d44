#include "volcanic/api/queue_sums.h"

#include <utility>

namespace volcanic {

void QueueSums::Add(const QueueSums& o, int sign) {
  jobs += sign * o.jobs;
  for (auto [into, from] : {std::pair{&allocated, &o.allocated}, std::pair{&request, &o.request},
                            std::pair{&inqueue, &o.inqueue}, std::pair{&elastic, &o.elastic},
                            std::pair{&overcommit_inqueue, &o.overcommit_inqueue}}) {
    if (sign > 0) *into += *from; else *into -= *from;
  }
}

void QueueSumsLink::Count(const std::string& queue, QueueSums terms) {
  if (!table_) return;
  if (counted_.jobs > 0) {
    auto it = table_->find(queue_);
    it->second.Add(counted_, -1);
    if (it->second.jobs == 0) table_->erase(it);  // its sums are back to exactly zero
  }
  queue_ = queue;
  counted_ = std::move(terms);
  if (counted_.jobs > 0) (*table_)[queue_].Add(counted_, +1);
}

}  // namespace volcanic
