// The capacity plugin's queue bookkeeping (Volcano's capacity.go: queueAttr,
// buildQueueAttrs, buildHierarchicalQueueAttrs, checkHierarchicalQueue).
//
// Promises: per queue its deserved, guarantee, capability and real
// capability (what it may hold at most: its capability, less what the
// guarantees of others keep from it), and what its jobs hold (allocated),
// were admitted with and do not hold yet (inqueue) and hold above their
// minimum (elastic). Flat: an entry for each queue that has jobs. Hierarchy:
// an entry for every queue, linked by spec.parent (empty: root); an inner
// queue's usage is the sum of its subtree's, and only leaves hold jobs.
// Resources follow Volcano's rules with `pods` left out of every comparison
// and share: Volcano's task requests do not carry it, volcanic's do (one per
// pod), and a queue's `pods` quota is never checked by Volcano either.
// Cost: building is O(queues x depth + jobs x depth); a lookup is
// O(log queues).
// Bad input: an unknown parent, a cycle of parents, a job in an inner queue
// or no root queue make BuildHierarchy return why (Volcano's
// readyToSchedule=false); nothing crashes.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "volcanic/api/types.h"

namespace volcanic {

class Session;

namespace capacity {

struct QueueAttr {
  const QueueInfo* queue = nullptr;
  QueueAttr* parent = nullptr;          // hierarchy only; nullptr for root
  std::vector<QueueAttr*> ancestors;    // hierarchy only: root first, parent last
  std::vector<QueueAttr*> children;     // hierarchy only
  Resource deserved, guarantee;
  Resource capability = Resource::Infinite();       // a dimension left out is unbounded
  Resource real_capability = Resource::Infinite();
  Resource allocated, inqueue, elastic;
  // What opted-in pods that passed Allocatable hold until placed (the
  // SchedulingGatesQueueAdmission reservations; capacity.cc).
  Resource reserved;
  double share = 0;

  const std::string& name() const { return queue->name; }
  bool leaf() const { return children.empty(); }
  bool root() const { return queue->name == "root"; }
  // The ancestor `depth` levels up (1: the parent), nullptr above the root
  // (Volcano's queueAncestorAtDepth).
  QueueAttr* AncestorAt(int depth) const;
  // allocated/deserved on the dominant dimension; 1 for a queue without
  // deserved (best effort: after every queue still below its deserved).
  void UpdateShare();
};

class QueueTree {
 public:
  // Volcano's buildQueueAttrs: the queues that have jobs, no parents.
  void BuildFlat(const Session& ssn);
  // Volcano's buildHierarchicalQueueAttrs: every queue, in a tree. Returns
  // "" when the tree is usable, else why not.
  std::string BuildHierarchy(const Session& ssn);

  QueueAttr* Find(const std::string& name);
  const std::map<std::string, QueueAttr>& attrs() const { return attrs_; }
  // allocated += sign * r on the queue and, in a hierarchy, its ancestors.
  void Charge(QueueAttr& a, const Resource& r, int sign);

 private:
  void Distribute(QueueAttr& root);
  std::map<std::string, QueueAttr> attrs_;  // std::map: pointers stay valid
};

// Volcano's getQueueLevel: the index in `ancestors` of the deepest common
// ancestor of two queues.
int QueueLevel(const QueueAttr& l, const QueueAttr& r);
// Volcano's compareShareWithDeserved: lower share first; on a tie a queue
// with deserved before a best-effort one. 0 when either is unknown.
int CompareShare(const QueueAttr* l, const QueueAttr* r);

// What a job adds to its queue at session open (allocated, inqueue,
// elastic), as Volcano's buildQueueAttrs counts it.
struct JobUse {
  Resource allocated, inqueue, elastic;
};
JobUse UseOf(const JobInfo& job);
// Resource comparisons of Volcano's capacity plugin (resource_info.go),
// `pods` left out:
// - some dimension both use (Intersection);
bool Intersects(const Resource& a, const Resource& b);
// - on some dimension req asks for, used is within deserved
//   (LessEqualPartlyWithDimensionZeroFiltered);
bool WithinDeservedSomewhere(const Resource& used, const Resource& deserved, const Resource& req);
// - on some dimension req asks for and deserved names, allocated is above
//   deserved (GreaterPartlyWithRelevantDimensions);
bool AboveDeservedSomewhere(const Resource& allocated, const Resource& deserved, const Resource& req);
// - every dimension of guarantee is still covered by `left`
//   (guarantee.LessEqual(left, Zero)).
bool CoversGuarantee(const Resource& left, const Resource& guarantee);

}  // namespace capacity
}  // namespace volcanic
