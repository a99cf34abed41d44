// random: volcanic's own baseline scorer, not a Volcano plugin. Scores each
// (task, node) pair with a number drawn from a hash of the seed, the task's
// UID and the node's name, so among the nodes that fit the best is a uniform
// random one (random fit), the same for the same seed on every run. The
// score depends on the task itself, not only its class, so it is not
// node-local: every node is scored for every task.
#include <cstdint>

#include <string>

#include "volcanic/framework/session.h"
#include "volcanic/plugins/plugins.h"

namespace volcanic {
namespace {

// SplitMix64's finaliser: absl::Hash is salted per process, so it would not
// give the same draw on every run.
uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t Fnv1a(const std::string& s, uint64_t h) {
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

class RandomPlugin : public Plugin {
 public:
  RandomPlugin(uint64_t seed, double weight) : seed_(seed), weight_(weight) {}

  void OnSessionOpen(PluginHandle& h) override {
    h.AddNodeOrderFn([this](const TaskInfo& t, const NodeInfo& n) { return Draw(t, n); });
  }

 private:
  double Draw(const TaskInfo& t, const NodeInfo& n) const {
    uint64_t h = Mix(Fnv1a(n.name, Fnv1a(t.uid, 0xcbf29ce484222325ULL ^ Mix(seed_))));
    return weight_ * 100 * static_cast<double>(h >> 11) / static_cast<double>(uint64_t{1} << 53);
  }

  uint64_t seed_;
  double weight_;
};

}  // namespace

PluginOr NewRandomPlugin(const Arguments& args) {
  if (auto s = args.CheckKnown({"random.seed", "random.weight"}); !s.ok()) return s;
  auto seed = args.Int("random.seed", 0);
  auto weight = args.Float("random.weight", 1);
  if (!seed.ok()) return seed.status();
  if (!weight.ok()) return weight.status();
  return std::make_unique<RandomPlugin>(static_cast<uint64_t>(*seed), *weight);
}

}  // namespace volcanic
