// tdm (Volcano's pkg/scheduler/plugins/tdm): time-division multiplexing of
// revocable nodes. A node labelled volcano.sh/revocable-zone=<zone> belongs
// to that zone, open during the daily window of the argument
// tdm.revocable-zone.<zone> (tdm.h for the window and its clock).
//  - Predicate: on a revocable node, the zone must be configured and open,
//    and the task must have a revocable zone (its pod annotated
//    volcano.sh/revocable-zone: "*", or else volcano.sh/preemptable: true;
//    Volcano's GetPodRevocableZone); otherwise unresolvable.
//  - NodeOrder: 100 on an open revocable node for such a task, else 0.
//  - Preemptable: a preemptable task, or one with a revocable zone, takes no
//    victim; others may take Running preemptable tasks on ordinary nodes,
//    at most the job's disruption budget of each job (below).
//  - VictimTasks (the shuffle action): at most once per tdm.evict.period
//    (default 1m), the Running preemptable tasks on the nodes of every
//    closed zone, at most the budget of each job per zone. The time of the
//    last look is kept in the scheduler's Cache, as Volcano keeps it in a
//    package global: this callback is the one that changes state outside
//    the event handlers, once per shuffle.
//  - JobOrder: non-preemptable jobs first. JobPipelined: permits a job with
//    enough tasks pipelined or ready, else rejects. JobStarving: a
//    non-preemptable job with Pending tasks.
// A job's budget (Volcano's getMaxPodEvictNum), from its PodGroup's
// annotations volcano.sh/jdb-min-available (read first) or
// volcano.sh/jdb-max-unavailable, each an integer or a percentage of the
// job's tasks (rounded up): with max-unavailable, that number less the tasks
// neither Running nor finished; with min-available, the Running tasks above
// it; otherwise (or when Running tasks are not above min-available) one.
// Which tasks of a job are taken is deterministic where Volcano's map order
// is not: the first in the candidates' order (Preemptable), or by node name
// then pod key (VictimTasks).
//
// Cost: O(nodes + configured zones) at session open; a predicate or score is
// a label lookup and a zone lookup. Node-local only while no Ready node is
// labelled with a zone: the answers on a labelled node depend on the clock
// and on the pod's annotations, which are not part of its class.
#include "volcanic/plugins/tdm.h"

#include <cmath>
#include <memory>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "volcanic/api/duration.h"
#include "volcanic/api/errors.h"
#include "volcanic/framework/session.h"
#include "volcanic/plugins/plugins.h"

namespace volcanic {

namespace {

constexpr int64_t kSecondsPerDay = 24 * 60 * 60;

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// Go's time.Parse of "15:04": an hour of one or two digits, then ':' and
// exactly two minute digits, nothing else; -1 when it is not.
int ParseClock(absl::string_view s) {
  size_t colon = s.find(':');
  if (colon == absl::string_view::npos || colon == 0 || colon > 2 || s.size() != colon + 3) return -1;
  int hour = 0, minute = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i == colon) continue;
    if (!absl::ascii_isdigit(s[i])) return -1;
    int& part = i < colon ? hour : minute;
    part = part * 10 + (s[i] - '0');
  }
  return hour > 23 || minute > 59 ? -1 : hour * 60 + minute;
}

}  // namespace

absl::StatusOr<RevocableWindow> ParseRevocableWindow(absl::string_view text) {
  absl::string_view trimmed = absl::StripAsciiWhitespace(text);
  size_t dash = trimmed.find('-');
  int start = -1, end = -1;
  if (dash != absl::string_view::npos && trimmed.find('-', dash + 1) == absl::string_view::npos) {
    start = ParseClock(trimmed.substr(0, dash));
    end = ParseClock(trimmed.substr(dash + 1));
  }
  if (start < 0 || end < 0)
    return absl::InvalidArgumentError(absl::StrCat("\"", text, "\" is not a daily window HH:MM-HH:MM"));
  return RevocableWindow{start, end};
}

WindowSpan SpanOn(const RevocableWindow& w, int64_t now_ms) {
  int64_t day = FloorDiv(FloorDiv(now_ms, 1000), kSecondsPerDay) * kSecondsPerDay;
  int64_t end_day = w.end_min <= w.start_min ? day + kSecondsPerDay : day;
  return {day + int64_t{w.start_min} * 60, end_day + int64_t{w.end_min} * 60};
}

bool WindowOpen(const RevocableWindow& w, int64_t now_ms) {
  WindowSpan span = SpanOn(w, now_ms);
  int64_t now_s = FloorDiv(now_ms, 1000);
  return span.start_s <= now_s && now_s <= span.end_s;
}

int64_t NextWindowChangeMs(const RevocableWindow& w, int64_t now_ms) {
  WindowSpan span = SpanOn(w, now_ms);
  int64_t midnight = (FloorDiv(FloorDiv(now_ms, 1000), kSecondsPerDay) + 1) * kSecondsPerDay;
  int64_t next = midnight;
  for (int64_t at : {span.start_s, span.end_s + 1})
    if (at * 1000 > now_ms && at < next) next = at;
  return next * 1000;
}

namespace {

constexpr char kName[] = "tdm";
constexpr char kZonePrefix[] = "tdm.revocable-zone.";
constexpr char kEvictPeriod[] = "tdm.evict.period";
constexpr char kZoneLabel[] = "volcano.sh/revocable-zone";
constexpr char kPreemptableKey[] = "volcano.sh/preemptable";
constexpr char kJdbMinAvailable[] = "volcano.sh/jdb-min-available";
constexpr char kJdbMaxUnavailable[] = "volcano.sh/jdb-max-unavailable";
constexpr double kMaxNodeScore = 100;
constexpr int64_t kDefaultPeriodNs = int64_t{60} * 1000 * 1000 * 1000;

struct Zone {
  std::string raw;  // as configured, for the reason Volcano writes
  RevocableWindow window;
};

// Go's strconv.ParseBool, true side.
bool GoTrue(const std::string& v) {
  return v == "1" || v == "t" || v == "T" || v == "TRUE" || v == "true" || v == "True";
}

const std::string* Find(const Labels& m, const char* key) {
  auto it = m.find(key);
  return it == m.end() ? nullptr : &it->second;
}

// Volcano's GetPodRevocableZone, as a yes/no ("*" is the only zone there is).
bool HasRevocableZone(const TaskInfo& t) {
  if (const std::string* z = Find(t.annotations, kZoneLabel)) return *z == "*";
  const std::string* p = Find(t.annotations, kPreemptableKey);
  return p && GoTrue(*p);
}

const std::string* ZoneOf(const NodeInfo& n) {
  const std::string* z = Find(n.labels, kZoneLabel);
  return z && !z->empty() ? z : nullptr;
}

// Go's strconv.Atoi: an optional sign and decimal digits, nothing else.
bool GoAtoi(absl::string_view s, int64_t* out) {
  if (s.empty() || absl::ascii_isspace(s.front()) || absl::ascii_isspace(s.back())) return false;
  return absl::SimpleAtoi(s, out);
}

// Volcano's parseIntStr: an integer, or a percentage of `tasks` rounded up;
// 0 for anything else.
int64_t BudgetValue(const std::string& v, size_t tasks) {
  int64_t n = 0;
  if (GoAtoi(v, &n)) return static_cast<int32_t>(n);  // intstr keeps an int32
  if (v.empty() || v.back() != '%' || !GoAtoi(absl::string_view(v).substr(0, v.size() - 1), &n)) return 0;
  return static_cast<int64_t>(std::ceil(static_cast<double>(n) * static_cast<double>(tasks) / 100));
}

// How many of the job's tasks may be evicted now (see the top of the file).
int64_t MaxEvictions(const JobInfo& job) {
  const int64_t running = job.Count(Mask(TaskStatus::kRunning));
  const size_t tasks = job.tasks.size();
  const std::string* min_available = Find(job.annotations, kJdbMinAvailable);
  const std::string* max_unavailable = min_available ? nullptr : Find(job.annotations, kJdbMaxUnavailable);
  if (max_unavailable && !max_unavailable->empty()) {
    int64_t allowed = BudgetValue(*max_unavailable, tasks);
    int64_t finished = job.Count(Mask(TaskStatus::kSucceeded) | Mask(TaskStatus::kFailed));
    int64_t unavailable = static_cast<int64_t>(tasks) - finished - running;
    return unavailable >= allowed ? 0 : allowed - unavailable;
  }
  if (min_available && !min_available->empty()) {
    int64_t needed = BudgetValue(*min_available, tasks);
    if (running >= needed) return running - needed;
  }
  return 1;
}

// Keeps, of `tasks` in order, at most each job's MaxEvictions.
std::vector<TaskInfo*> WithinBudgets(const std::vector<TaskInfo*>& tasks) {
  absl::flat_hash_map<const JobInfo*, int64_t> left;
  std::vector<TaskInfo*> kept;
  for (TaskInfo* t : tasks) {
    auto [it, fresh] = left.try_emplace(t->job, 0);
    if (fresh) it->second = MaxEvictions(*t->job);
    if (it->second > 0) {
      --it->second;
      kept.push_back(t);
    }
  }
  return kept;
}

// A Running preemptable task of a job of the session.
bool Evictable(const TaskInfo& t) {
  return t.preemptable && t.status == TaskStatus::kRunning && t.job && Cache::Schedulable(*t.job);
}

class TdmPlugin : public Plugin {
 public:
  TdmPlugin(absl::btree_map<std::string, Zone> zones, int64_t period_ns)
      : zones_(std::move(zones)), period_ns_(period_ns) {}

  void OnSessionOpen(PluginHandle& h) override {
    Session& ssn = h.session();
    open_.clear();
    for (const auto& [name, zone] : zones_) {
      open_[name] = WindowOpen(zone.window, ssn.now_ms());
      ssn.WakeAt(NextWindowChangeMs(zone.window, ssn.now_ms()));
    }
    bool labelled = false;
    for (const NodeInfo* n : ssn.nodes()) labelled = labelled || ZoneOf(*n);
    if (!labelled) h.SetNodeLocal([](const TaskInfo&) { return true; });

    h.AddPredicateFn([this](const TaskInfo& t, const NodeInfo& n, std::vector<std::string>* reasons) {
      std::string reason = Misfit(t, n);
      if (reason.empty()) return Verdict::kFit;
      reasons->push_back(std::move(reason));
      return Verdict::kUnresolvable;
    });
    h.AddNodeOrderFn([this](const TaskInfo& t, const NodeInfo& n) {
      const std::string* zone = ZoneOf(n);
      return zone && Open(*zone) && HasRevocableZone(t) ? kMaxNodeScore : 0;
    });
    h.AddPreemptableFn([](const TaskInfo& preemptor, const std::vector<TaskInfo*>& candidates) {
      std::vector<TaskInfo*> victims;
      if (preemptor.preemptable || HasRevocableZone(preemptor)) return std::optional(victims);
      for (TaskInfo* t : candidates)
        if (Evictable(*t) && t->node && t->node->index >= 0 && !ZoneOf(*t->node)) victims.push_back(t);
      return std::optional(WithinBudgets(victims));
    });
    h.AddVictimTasksFn([this, &ssn](const std::vector<TaskInfo*>&) { return Victims(ssn); });
    h.AddJobOrderFn([](const JobInfo& l, const JobInfo& r) {
      if (l.preemptable == r.preemptable) return 0;
      return l.preemptable ? 1 : -1;
    });
    h.AddJobPipelinedFn([](const JobInfo& j) {
      return j.WaitingTaskNum() + j.ReadyTaskNum() + j.pending_best_effort >= j.min_available ? kPermit : kReject;
    });
    h.AddJobStarvingFn([](const JobInfo& j) { return !j.preemptable && j.Count(Mask(TaskStatus::kPending)) > 0; });
  }

 private:
  bool Open(const std::string& zone) const {
    auto it = open_.find(zone);
    return it != open_.end() && it->second;
  }

  // Volcano's reasons; empty when the task may go on the node.
  std::string Misfit(const TaskInfo& t, const NodeInfo& n) const {
    const std::string* zone = ZoneOf(n);
    if (!zone) return {};
    auto it = zones_.find(*zone);
    if (it == zones_.end()) return absl::StrCat("revocable zone ", *zone, " not support");
    if (!Open(*zone)) return absl::StrCat("current time beyond revocable zone ", *zone, ":", it->second.raw);
    return HasRevocableZone(t) ? std::string() : "not allow to dispatch to revocable node";
  }

  // Volcano's victimsFn: ignores the candidates it is offered.
  std::vector<TaskInfo*> Victims(Session& ssn) {
    std::optional<int64_t>& last = ssn.cache().last_run_ms(kName);
    const int64_t now = ssn.now_ms();
    // Volcano waits while last + period is after now; compared in whole
    // milliseconds, the period rounded up.
    const int64_t period_ms = FloorDiv(period_ns_ + 999999, 1000000);
    if (last && now - *last < period_ms) {
      ssn.WakeAt(*last + period_ms);
      return {};
    }
    std::vector<TaskInfo*> victims;
    for (const auto& [name, zone] : zones_) {
      if (Open(name)) continue;
      std::vector<TaskInfo*> on_zone;
      for (const NodeInfo* n : ssn.nodes()) {
        const std::string* z = ZoneOf(*n);
        if (!z || *z != name) continue;
        for (const auto& [key, t] : n->tasks)
          if (Evictable(*t)) on_zone.push_back(t);
      }
      for (TaskInfo* t : WithinBudgets(on_zone)) victims.push_back(t);
    }
    last = now;
    ssn.WakeAt(now + period_ms);
    return victims;
  }

  absl::btree_map<std::string, Zone> zones_;
  int64_t period_ns_;
  absl::flat_hash_map<std::string, bool> open_;  // per configured zone, this session
};

}  // namespace

PluginOr NewTdmPlugin(const Arguments& args) {
  if (auto s = args.CheckKnown({kEvictPeriod}, {kZonePrefix}); !s.ok()) return s;
  absl::btree_map<std::string, Zone> zones;
  for (const auto& [key, value] : args.raw().items()) {
    if (!absl::StartsWith(key, kZonePrefix)) continue;
    auto raw = args.String(key, "");
    if (!raw.ok()) return raw.status();
    auto window = ParseRevocableWindow(*raw);
    if (!window.ok()) return ConfigError(absl::StrCat("plugin tdm: argument ", key, ": ", window.status().message()));
    zones[key.substr(sizeof(kZonePrefix) - 1)] = Zone{*raw, *window};
  }
  auto period = args.String(kEvictPeriod, "");
  if (!period.ok()) return period.status();
  int64_t period_ns = kDefaultPeriodNs;
  if (!period->empty()) {
    auto parsed = ParseGoDuration(*period);
    if (!parsed.ok())
      return ConfigError(absl::StrCat("plugin tdm: argument ", kEvictPeriod, ": ", parsed.status().message()));
    period_ns = *parsed;
  }
  return std::make_unique<TdmPlugin>(std::move(zones), period_ns);
}

}  // namespace volcanic
