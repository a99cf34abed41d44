#include "helpers.h"

#include <catch2/catch.hpp>

#include "volcanic/framework/scheduler.h"

namespace volcanic::testing {

void Load(Cache& cache, const json& objects) {
  for (const auto& o : objects) {
    auto r = cache.Upsert(o);
    INFO(r.status().ToString());
    REQUIRE(r.ok());
  }
}

SchedulerConf Conf(const std::string& json_text, const Registry& registry) {
  auto conf = ParseSchedulerConf(json::parse(json_text), registry);
  INFO(conf.status().ToString());
  REQUIRE(conf.ok());
  return *conf;
}

Decisions Run(const std::string& conf, const json& objects) {
  Scheduler s(Conf(conf));
  Load(s.cache(), objects);
  auto d = s.RunOnce(0);
  REQUIRE(d.ok());
  return *d;
}

}  // namespace volcanic::testing
