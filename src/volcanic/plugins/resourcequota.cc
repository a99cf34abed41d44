// resourcequota (Volcano's pkg/scheduler/plugins/resourcequota): a job with
// minResources is enqueued only while, for every ResourceQuota of its
// namespace, each resource the quota's status.hard limits stays within it:
// status.used, plus the minResources of the namespace's jobs enqueued earlier
// in the session, plus the job's. Names are compared as written (requests.cpu
// and cpu are different resources, as in Kubernetes' quota arithmetic), and
// values exactly.
// Cost: O(quotas of the namespace x names of minResources) per job, at enqueue.
#include <algorithm>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "volcanic/framework/session.h"
#include "volcanic/framework/tiers.h"
#include "volcanic/plugins/plugins.h"

namespace volcanic {
namespace {

class ResourceQuotaPlugin : public Plugin {
 public:
  void OnSessionOpen(PluginHandle& h) override {
    Session& ssn = h.session();
    quotas_ = &ssn.cache().resource_quotas();
    pending_.clear();
    h.AddJobEnqueueableFn([this, &ssn](const JobInfo& job) {
      std::string why;
      if (Admits(job, &why)) return kPermit;
      ssn.Explain(job, why);
      return kReject;
    });
    // Volcano reserves in its enqueueable callback, for any job it permits;
    // here only jobs enqueue admitted hold their share (callbacks keep no
    // state of their own).
    h.AddJobEnqueuedFn([this](const JobInfo& job) {
      if (!job.quota_request) return;
      QuotaList& sum = pending_[job.ns];
      for (const auto& [name, value] : *job.quota_request) Add(sum, name, value);
    });
  }

 private:
  // On a refusal *why names the quota and the resource.
  bool Admits(const JobInfo& job, std::string* why) const {
    if (!job.quota_request) return true;
    auto pending = pending_.find(job.ns);
    for (auto it = quotas_->lower_bound(job.ns + "/"); it != quotas_->end() && it->second.ns == job.ns; ++it) {
      const QuotaStatus& q = it->second;
      for (const auto& [name, request] : *job.quota_request) {
        std::optional<__int128> hard = QuotaValue(q.hard, name);
        if (!hard) continue;
        __int128 used = QuotaValue(q.used, name).value_or(0);
        if (pending != pending_.end()) used += QuotaValue(pending->second, name).value_or(0);
        if (used + request > *hard) {
          *why = absl::StrCat("resourcequota: ", name, " of ResourceQuota ", q.ns, "/", q.name,
                              " would exceed its hard limit");
          return false;
        }
      }
    }
    return true;
  }

  static void Add(QuotaList& sum, const std::string& name, __int128 value) {
    auto it = std::lower_bound(sum.begin(), sum.end(), name,
                               [](const auto& e, const std::string& n) { return e.first < n; });
    if (it != sum.end() && it->first == name) {
      it->second += value;
    } else {
      sum.emplace(it, name, value);
    }
  }

  const absl::btree_map<std::string, QuotaStatus>* quotas_ = nullptr;
  absl::flat_hash_map<std::string, QuotaList> pending_;  // by namespace, this session
};

}  // namespace

PluginOr NewResourceQuotaPlugin(const Arguments& args) {
  if (auto s = args.CheckKnown({}); !s.ok()) return s;
  return std::make_unique<ResourceQuotaPlugin>();
}

}  // namespace volcanic
