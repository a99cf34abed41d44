#include "volcanic/plugins/hdrf.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "volcanic/plugins/share.h"

namespace volcanic {

struct HdrfTree::Node {
  std::string name;
  double weight = 1;
  Node* parent = nullptr;
  // Children in a fixed order (sub-paths by segment, then jobs by key), so
  // sums are the same in every run; Volcano walks a Go map.
  absl::btree_map<std::string, std::unique_ptr<Node>> queues;
  absl::btree_map<std::string, std::unique_ptr<Node>> jobs;
  bool leaf = false;
  Resource job_allocated, job_request;  // leaves only
  std::vector<double> allocated;        // rescaled, over the total's resource ids
  double share = 0;
  bool saturated = false;

  template <typename F>
  void ForEachChild(F f) const {
    for (const auto& [k, c] : queues) f(*c);
    for (const auto& [k, c] : jobs) f(*c);
  }
};

namespace {

// As Volcano: a weight that does not parse, or is below 1, is 1. (NaN, which
// Go would keep and which would make every comparison false, is 1 too.)
double ParseWeight(absl::string_view text) {
  double w = 0;
  if (!absl::SimpleAtod(text, &w) || !(w >= 1)) return 1;
  return w;
}

// Volcano's calculateShare over the resources the cluster has.
double DominantShareOf(const std::vector<double>& allocated, const Resource& total) {
  double share = 0;
  for (int i = 0; i < total.Size(); ++i)
    if (total.Get(i) > 0) share = std::max(share, allocated[i] / static_cast<double>(total.Get(i)));
  return share;
}

}  // namespace

HdrfTree::HdrfTree(Resource total) : total_(std::move(total)), root_(std::make_unique<Node>()) {
  root_->name = "root";
  root_->allocated.assign(total_.Size(), 0);
}

HdrfTree::~HdrfTree() = default;

HdrfTree::Node* HdrfTree::Child(Node* parent, const std::string& segment, double weight) {
  auto [it, created] = parent->queues.try_emplace(segment);
  if (created) {
    it->second = std::make_unique<Node>();
    it->second->name = segment;
    it->second->weight = weight;
    it->second->parent = parent;
    it->second->allocated.assign(total_.Size(), 0);
  }
  return it->second.get();
}

void HdrfTree::AddJob(const JobInfo& job, const QueueInfo& queue) {
  if (leaves_.contains(&job)) return;
  std::vector<std::string> segments = absl::StrSplit(queue.hierarchy, '/');
  std::vector<absl::string_view> weights = absl::StrSplit(queue.hierarchy_weights, '/');
  Node* node = root_.get();
  for (size_t i = 1; i < segments.size(); ++i)
    node = Child(node, segments[i], ParseWeight(i < weights.size() ? weights[i] : ""));
  auto leaf = std::make_unique<Node>();
  leaf->name = job.key;
  leaf->leaf = true;
  leaf->parent = node;
  leaf->job_allocated = job.allocated;
  leaf->job_request = job.total_request;
  leaf->allocated.assign(total_.Size(), 0);
  leaves_[&job] = leaf.get();
  node->jobs[job.key] = std::move(leaf);
  total_allocated_ += job.allocated;
}

void HdrfTree::Finish(const absl::btree_map<std::string, const QueueInfo*>& queues) {
  demanding_ = Demanding();
  UpdateAll(root_.get());
  for (const auto& [name, q] : queues) paths_[name] = Resolve(q->hierarchy);
}

void HdrfTree::Adjust(const JobInfo& job, const Resource& req, int sign) {
  auto it = leaves_.find(&job);
  if (it == leaves_.end()) return;
  Node* leaf = it->second;
  if (sign > 0) {
    leaf->job_allocated += req;
    total_allocated_ += req;
  } else {
    leaf->job_allocated -= req;
    total_allocated_ -= req;
  }
  // Saturation of every leaf depends on which resources are left: when that
  // set changes, everything is recomputed; otherwise only this leaf's line.
  std::vector<bool> demanding = Demanding();
  if (demanding != demanding_) {
    demanding_ = std::move(demanding);
    UpdateAll(root_.get());
    return;
  }
  UpdateLeaf(leaf);
  for (Node* n = leaf->parent; n; n = n->parent) UpdateInner(n);
}

int HdrfTree::Compare(const QueueInfo& l, const QueueInfo& r) const {
  Path lscratch, rscratch;
  const Path& lp = PathOf(l, &lscratch);
  const Path& rp = PathOf(r, &rscratch);
  size_t depth = std::min(lp.size(), rp.size());
  for (size_t i = 0; i < depth; ++i) {
    const Node* ln = lp[i];
    const Node* rn = rp[i];
    bool lsat = ln && ln->saturated, rsat = rn && rn->saturated;
    // Saturated nodes go last, so that demanding ones are served first.
    if (lsat != rsat) return lsat ? 1 : -1;
    double lv = ln ? ln->share / ln->weight : 0, rv = rn ? rn->share / rn->weight : 0;
    if (lv != rv) return lv < rv ? -1 : 1;
  }
  return 0;
}

std::optional<HdrfTree::NodeState> HdrfTree::Find(absl::string_view path) const {
  Path p = Resolve(std::string(path));
  if (!p.back()) return std::nullopt;
  return NodeState{p.back()->share, p.back()->weight, p.back()->saturated};
}

HdrfTree::Path HdrfTree::Resolve(const std::string& hierarchy) const {
  std::vector<std::string> segments = absl::StrSplit(hierarchy, '/');
  Path path = {root_.get()};
  const Node* node = root_.get();
  for (size_t i = 1; i < segments.size(); ++i) {
    if (node) {
      auto it = node->queues.find(segments[i]);
      node = it == node->queues.end() ? nullptr : it->second.get();
    }
    path.push_back(node);
  }
  return path;
}

const HdrfTree::Path& HdrfTree::PathOf(const QueueInfo& q, Path* scratch) const {
  auto it = paths_.find(q.name);
  if (it != paths_.end()) return it->second;
  *scratch = Resolve(q.hierarchy);
  return *scratch;
}

std::vector<bool> HdrfTree::Demanding() const {
  std::vector<bool> out(total_.Size());
  for (int i = 0; i < total_.Size(); ++i) out[i] = total_.Get(i) > 0 && total_allocated_.Get(i) < total_.Get(i);
  return out;
}

// Volcano's resourceSaturated: the job holds all it asks of some resource,
// or holds some of a resource it asks for that nobody can get more of.
void HdrfTree::UpdateLeaf(Node* leaf) {
  leaf->share = DominantShare(leaf->job_allocated, total_);
  for (int i = 0; i < total_.Size(); ++i) leaf->allocated[i] = static_cast<double>(leaf->job_allocated.Get(i));
  leaf->saturated = false;
  int span = leaf->job_allocated.Span(leaf->job_request);
  for (int i = 0; i < span && !leaf->saturated; ++i) {
    int64_t have = leaf->job_allocated.Get(i), want = leaf->job_request.Get(i);
    if (have <= 0 || want == 0) continue;
    bool left = i < static_cast<int>(demanding_.size()) && demanding_[i];
    leaf->saturated = have >= want || !left;
  }
}

// Volcano's updateHierarchicalShare for an inner node whose children are
// up to date.
void HdrfTree::UpdateInner(Node* node) {
  double min_share = 1;  // the least-served demanding child's share
  node->ForEachChild([&](const Node& c) {
    if (c.share != 0 && !c.saturated) min_share = std::min(min_share, c.share);
  });
  std::fill(node->allocated.begin(), node->allocated.end(), 0.0);
  bool saturated = true;
  node->ForEachChild([&](const Node& c) {
    if (!c.saturated) saturated = false;
    if (c.share == 0) return;
    double scale = c.saturated ? 1 : min_share / c.share;
    for (size_t i = 0; i < node->allocated.size(); ++i) node->allocated[i] += c.allocated[i] * scale;
  });
  node->share = DominantShareOf(node->allocated, total_);
  node->saturated = saturated;
}

void HdrfTree::UpdateAll(Node* node) {
  for (auto& [k, c] : node->queues) UpdateAll(c.get());
  for (auto& [k, c] : node->jobs) UpdateLeaf(c.get());
  UpdateInner(node);
}

}  // namespace volcanic
