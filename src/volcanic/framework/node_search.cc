#include "volcanic/framework/node_search.h"

#include <algorithm>

#include "absl/container/btree_set.h"
#include "absl/container/inlined_vector.h"
#include "volcanic/framework/session.h"

namespace volcanic {

// Per task class: every session node's last evaluation, and the fitting
// nodes ranked by (group, score desc, node index).
struct NodeSearch::ClassIndex {
  struct Key {
    int group;
    double score;
    int node;
    bool operator<(const Key& o) const {
      if (group != o.group) return group < o.group;
      if (score != o.score) return score > o.score;
      return node < o.node;
    }
  };
  absl::btree_set<Key> ranked;
  std::vector<uint64_t> seen_version;  // per node; evaluated at this version
  std::vector<Key> key;                // per node; group kNoFit when not ranked
  std::vector<absl::InlinedVector<int, 2>> reasons;  // per node, when not fitting
  size_t cursor = 0;                   // into change_log_
  uint64_t last_use = 0;               // Memory::uses at its last Index()
  bool errors_valid = false;
  FitErrors errors;
};

NodeSearch::Memory::Memory() = default;
NodeSearch::Memory::~Memory() = default;

// The change log is trimmed at 16 entries per node: rebuilding the indexes
// then costs O(nodes) per class once per that many changes.
NodeSearch::NodeSearch(Session& ssn, Memory* kept)
    : ssn_(ssn),
      own_(kept ? nullptr : std::make_unique<Memory>()),
      m_(kept ? *kept : *own_),
      change_log_(ssn.cache().node_changes()) {
  ssn.cache().TrimNodeChanges(16 * ssn.nodes().size() + 4096);
  if (m_.generation != ssn.cache().node_generation() || !ssn.AnswersOutliveSession()) {
    m_.classes.clear();
    m_.generation = ssn.cache().node_generation();
  }
}
NodeSearch::~NodeSearch() = default;

int NodeSearch::ReasonId(const std::string& reason) {
  auto [it, inserted] = m_.reason_ids.try_emplace(reason, static_cast<int>(m_.reason_names.size()));
  if (inserted) m_.reason_names.push_back(reason);
  return it->second;
}

int NodeSearch::InsufficientReasonId(ResourceId r) {
  auto& ids = m_.insufficient_ids;
  if (static_cast<int>(ids.size()) <= r) ids.resize(r + 1, -1);
  if (ids[r] < 0) ids[r] = ReasonId("Insufficient " + ResourceNames::Name(r));
  return ids[r];
}

NodeSearch::Fit NodeSearch::Evaluate(const TaskInfo& task, const NodeInfo& node, bool resource_check,
                                     ResourceId* short_of, std::vector<std::string>* reasons) const {
  *short_of = -1;
  if (resource_check && !node.FitsFutureIdle(task.resreq, short_of)) return kNoFit;
  if (!ssn_.Predicate(task, node, reasons)) return kNoFit;
  if (resource_check) return node.FitsIdle(task.resreq) ? kFitIdle : kFitFuture;
  // Backfill binds at once, so its pod needs a pod slot free now: Releasing
  // pods, this session's evictions too, hold theirs until they are gone (the
  // pod-number predicate leaves evictions out so preempt can pipeline).
  if (node.idle.Get(kPods) < task.resreq.Get(kPods)) {
    reasons->push_back(kPodNumberExceeded);
    return kNoFit;
  }
  return kFitIdle;
}

NodeSearch::Result NodeSearch::Find(const TaskInfo& task, bool resource_check, FitErrors* errors,
                                    absl::Span<NodeInfo* const> within) {
  if (!within.empty()) return FindGeneric(task, resource_check, within, errors);
  if (indexing_ && resource_check && task.class_id >= 0 && ssn_.NodeLocal(task))
    return FindIndexed(task, errors);
  return FindGeneric(task, resource_check, ssn_.nodes(), errors);
}

NodeSearch::Result NodeSearch::FindGeneric(const TaskInfo& task, bool resource_check,
                                           absl::Span<NodeInfo* const> nodes, FitErrors* errors) {
  std::vector<NodeInfo*> groups[2];
  std::vector<std::string> reasons;
  FitErrors fe;
  for (NodeInfo* node : nodes) {
    reasons.clear();
    ResourceId short_of;
    Fit fit = Evaluate(task, *node, resource_check, &short_of, &reasons);
    if (fit == kNoFit) {
      if (short_of >= 0) reasons.push_back(m_.reason_names[InsufficientReasonId(short_of)]);
      fe.AddNode(reasons);
    } else {
      groups[fit].push_back(node);
    }
  }
  for (auto& group : groups) {
    if (group.empty()) continue;
    Result r{group.front(), &group == &groups[0]};
    if (group.size() == 1 || !ssn_.HasNodeOrder()) return r;
    std::vector<double> scores;
    ssn_.NodeScores(task, group, &scores);
    size_t best = 0;
    for (size_t i = 1; i < group.size(); ++i)
      if (scores[i] > scores[best]) best = i;  // strict: ties keep the first by name
    r.node = group[best];
    return r;
  }
  *errors = std::move(fe);
  return {};
}

size_t NodeSearch::KeptClasses() const {
  return std::max(kMinKeptClasses, kKeptEvaluations / std::max<size_t>(ssn_.nodes().size(), 1));
}

NodeSearch::ClassIndex& NodeSearch::Index(const TaskInfo& task) {
  scratch_indices_.clear();
  auto it = m_.classes.find(task.class_key);
  if (it == m_.classes.end()) {
    if (m_.classes.size() >= KeptClasses()) {
      auto lru = std::min_element(m_.classes.begin(), m_.classes.end(), [](const auto& a, const auto& b) {
        return a.second->last_use < b.second->last_use;
      });
      m_.classes.erase(lru);
    }
    it = m_.classes.emplace(task.class_key, std::make_unique<ClassIndex>()).first;
    ClassIndex& fresh = *it->second;
    size_t n = ssn_.nodes().size();
    fresh.seen_version.assign(n, 0);
    fresh.key.assign(n, {kNoFit, 0, 0});
    fresh.reasons.resize(n);
    for (size_t i = 0; i < n; ++i) scratch_indices_.push_back(static_cast<int>(i));
    fresh.cursor = change_log_.size();
  }
  ClassIndex& ci = *it->second;
  ci.last_use = ++m_.uses;
  for (; ci.cursor < change_log_.size(); ++ci.cursor) {
    int i = change_log_[ci.cursor];
    uint64_t version = ssn_.nodes()[i]->version;
    if (version == ci.seen_version[i]) continue;  // seen, or already listed
    ci.seen_version[i] = version;
    scratch_indices_.push_back(i);
  }
  if (!scratch_indices_.empty()) Refresh(ci, task, scratch_indices_);
  return ci;
}

// Evaluates the listed nodes, then scores the fitting ones in one batch:
// node-local scores do not depend on which other nodes share the batch, and
// one call for many nodes is what makes batch plugins (Python ones above
// all) cheap.
void NodeSearch::Refresh(ClassIndex& ci, const TaskInfo& task, const std::vector<int>& indices) {
  ci.errors_valid = false;
  scratch_fitting_.clear();
  scratch_fit_nodes_.clear();
  for (int i : indices) {
    NodeInfo* node = ssn_.nodes()[i];
    ci.seen_version[i] = node->version;
    if (ci.key[i].group != kNoFit) ci.ranked.erase(ci.key[i]);
    scratch_reasons_.clear();
    ResourceId short_of;
    Fit fit = Evaluate(task, *node, true, &short_of, &scratch_reasons_);
    ci.reasons[i].clear();
    ci.key[i] = {fit, 0, i};
    if (fit == kNoFit) {
      if (short_of >= 0) ci.reasons[i].push_back(InsufficientReasonId(short_of));
      for (const auto& r : scratch_reasons_) ci.reasons[i].push_back(ReasonId(r));
      continue;
    }
    scratch_fitting_.push_back(i);
    scratch_fit_nodes_.push_back(node);
  }
  if (scratch_fitting_.empty()) return;
  if (ssn_.HasNodeOrder()) {
    ssn_.NodeScores(task, scratch_fit_nodes_, &scratch_scores_);
  } else {
    scratch_scores_.assign(scratch_fitting_.size(), 0.0);
  }
  for (size_t k = 0; k < scratch_fitting_.size(); ++k) {
    int i = scratch_fitting_[k];
    ci.key[i].score = scratch_scores_[k];
    ci.ranked.insert(ci.key[i]);
  }
}

NodeSearch::Result NodeSearch::FindIndexed(const TaskInfo& task, FitErrors* errors) {
  ClassIndex& ci = Index(task);
  if (!ci.ranked.empty()) {
    const auto& best = *ci.ranked.begin();
    return {ssn_.nodes()[best.node], best.group == kFitIdle};
  }
  if (!ci.errors_valid) {
    ci.errors = FitErrors();
    std::vector<std::string> names;
    for (const auto& ids : ci.reasons) {
      names.clear();
      for (int id : ids) names.push_back(m_.reason_names[id]);
      ci.errors.AddNode(names);
    }
    ci.errors_valid = true;
  }
  *errors = ci.errors;
  return {};
}

}  // namespace volcanic
