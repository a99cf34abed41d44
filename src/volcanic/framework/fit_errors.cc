#include "volcanic/framework/fit_errors.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace volcanic {

void FitErrors::AddNode(const std::vector<std::string>& node_reasons) {
  ++nodes;
  for (const auto& r : node_reasons)
    if (!r.empty()) ++reasons[r];
}

std::string FitErrors::Error() const {
  std::string h = head.empty() ? absl::StrCat("0/", nodes, " nodes are unavailable") : head;
  if (nodes == 0) return h;
  std::vector<std::string> items;
  for (const auto& [reason, count] : reasons) items.push_back(absl::StrCat(count, " ", reason));
  std::sort(items.begin(), items.end());  // as strings: "10 x" sorts before "2 y"
  return absl::StrCat(h, ": ", absl::StrJoin(items, ", "), ".");
}

}  // namespace volcanic
