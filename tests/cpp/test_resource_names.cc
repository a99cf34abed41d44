// Resource names are held by the objects that use them and their ids reused
// once none does (volcanic/api/resource.h), so a long-lived cache follows
// what is alive: names, vector width and task classes stay bounded however
// many distinct names go by.
#include <catch2/catch.hpp>

#include <string>

#include "helpers.h"
#include "volcanic/api/resource.h"

using namespace volcanic;
using namespace volcanic::testing;

namespace {

json PodWithName(int i) {
  json p = Pod("ns", "p" + std::to_string(i), "1m", "1Mi", "");
  p["metadata"].erase("annotations");
  p["spec"]["containers"][0]["resources"]["requests"]["example.com/r" + std::to_string(i)] = "1";
  return p;
}

}  // namespace

TEST_CASE("a resource name is released with the last object holding it, and its id reused", "[resource_names]") {
  const int width = ResourceNames::Width();
  ResourceId first;
  {
    ResourceNameRefs a;
    first = a.Hold("example.com/held-once");
    ResourceNameRefs b = a;  // a copy holds it too
    REQUIRE(ResourceNames::Find("example.com/held-once") == first);
    a = ResourceNameRefs();
    CHECK(ResourceNames::Find("example.com/held-once") == first);  // b still holds it
  }
  CHECK(ResourceNames::Find("example.com/held-once") == -1);
  CHECK(ResourceNames::Width() == width);
  ResourceNameRefs c;
  CHECK(c.Hold("example.com/another") == first);  // the freed id, not a new one
  CHECK(ResourceNames::Name(first) == "example.com/another");
  CHECK(ResourceNames::IsBytes(c.Hold("example.com/local-storage")));
}

TEST_CASE("names pinned by code stay; the built-in ones need no holding", "[resource_names]") {
  ResourceId gpu = ResourceNames::Intern("nvidia.com/gpu");
  { ResourceNameRefs r; CHECK(r.Hold("nvidia.com/gpu") == gpu); }
  CHECK(ResourceNames::Find("nvidia.com/gpu") == gpu);
  ResourceNameRefs r;
  CHECK(r.Hold("cpu") == kCpu);
  CHECK(r.Hold("pods") == kPods);
}

TEST_CASE("a cache seeing 20000 distinct names, 200 alive, stays as wide as what is alive", "[resource_names]") {
  Cache cache;
  Load(cache, json::array({Node("n1", "64", "256Gi", json::object(), "1000")}));
  const int names_before = ResourceNames::Count(), width_before = ResourceNames::Width();
  int widest = 0, most_names = 0, most_classes = 0;
  for (int i = 0; i < 20000; ++i) {
    REQUIRE(cache.Upsert(PodWithName(i)).ok());
    if (i >= 200) REQUIRE(cache.Delete("Pod", "p" + std::to_string(i - 200), "ns").ok());
    widest = std::max(widest, ResourceNames::Width());
    most_names = std::max(most_names, ResourceNames::Count());
    most_classes = std::max(most_classes, cache.class_count());
  }
  CHECK(most_names <= names_before + 201);
  // Freed ids are reused before the table grows.
  CHECK(widest <= std::max(width_before, names_before + 201));
  CHECK(most_classes <= 201);
  CHECK(cache.FindNode("n1")->used.Size() <= widest);
  for (int i = 19800; i < 20000; ++i) REQUIRE(cache.Delete("Pod", "p" + std::to_string(i), "ns").ok());
  CHECK(ResourceNames::Count() == names_before);
  CHECK(cache.class_count() == 0);
}
