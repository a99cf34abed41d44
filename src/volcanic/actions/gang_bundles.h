// The victims gangpreempt and gangreclaim choose from, grouped per job
// (Volcano v1.15 pkg/scheduler/actions/utils/bundle.go): a job's "safe"
// bundle holds the tasks it can lose and stay gang-ready (its surplus above
// minMember, each role's above its minTaskMember, each sub-group policy's
// ready gangs above minSubGroups); its "whole" bundle holds the rest, whose
// eviction breaks the gang. Safe bundles are taken before whole ones, and a
// whole bundle is taken entirely or not at all.
#pragma once

#include <functional>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "volcanic/api/types.h"

namespace volcanic {

struct JobGangs;

struct Bundle {
  bool whole = false;
  const JobInfo* job = nullptr;
  std::vector<TaskInfo*> tasks;
  Resource local;   // what its tasks hold
  Resource global;  // a whole bundle: what all the job's tasks ask (the gang it breaks)
};

// The job's bundles of `tasks` (its candidates on one domain): safe first,
// then whole, either left out when empty. Tasks are taken lowest priority
// first, then by UID. `gangs` gives the sub-group policies' gangs.
std::vector<Bundle> MakeBundles(const JobInfo& job, std::vector<TaskInfo*> tasks, const JobGangs& gangs);

// The bundles after a plugin veto: a safe bundle keeps its allowed tasks, a
// whole bundle survives only if all its tasks are allowed.
std::vector<Bundle> KeepAllowed(const std::vector<Bundle>& bundles, const absl::flat_hash_set<const TaskInfo*>& allowed);

std::vector<TaskInfo*> Flatten(const std::vector<Bundle>& bundles);

// Orders bundles: safe before whole; then by `victim_first` (whose victims go
// first, between bundles of different jobs; nullptr: no opinion); then by the
// share of `need` a bundle covers for what it costs (its local resources
// capped at the need, over its global ones; a safe bundle costs nothing);
// then by job UID, first task UID and size.
using VictimFirst = std::function<bool(const JobInfo& l, const JobInfo& r)>;
void SortBundles(std::vector<Bundle>* bundles, const Resource& need, const VictimFirst& victim_first);

}  // namespace volcanic
