// Why a task fits no node (Volcano's api.FitErrors, reference §4.3): a
// histogram of per-node reasons, rendered as
//   "0/3 nodes are unavailable: 1 node(s) had untolerated taint {k: v}, 2 Insufficient cpu."
// where 3 counts the nodes that failed and the "N reason" items are sorted
// as plain strings, like Volcano does.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace volcanic {

// Volcano's api.NodePodNumberExceeded.
inline constexpr char kPodNumberExceeded[] = "node(s) pod number exceeded";

struct FitErrors {
  std::string head;                    // overrides "0/N nodes are unavailable"
  std::map<std::string, int> reasons;  // reason -> nodes
  int nodes = 0;                       // nodes that failed

  void AddNode(const std::vector<std::string>& node_reasons);
  std::string Error() const;
};

}  // namespace volcanic
