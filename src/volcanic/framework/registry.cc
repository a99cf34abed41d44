#include "volcanic/framework/registry.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "volcanic/api/errors.h"

namespace volcanic {
namespace {

template <typename Factory>
absl::Status Add(std::vector<std::pair<std::string, Factory>>& table, const char* what, const std::string& name,
                 Factory factory) {
  if (name.empty()) return ConfigError(absl::StrCat("registry: a ", what, " needs a non-empty name"));
  for (const auto& [n, f] : table)
    if (n == name)
      return ConfigError(absl::StrCat("registry: a ", what, " named \"", name,
                                      "\" is already registered; give it another name"));
  table.emplace_back(name, std::move(factory));
  return absl::OkStatus();
}

template <typename Factory>
const Factory* Find(const std::vector<std::pair<std::string, Factory>>& table, const std::string& name) {
  for (const auto& [n, f] : table)
    if (n == name) return &f;
  return nullptr;
}

template <typename Factory>
std::vector<std::string> Names(const std::vector<std::pair<std::string, Factory>>& table) {
  std::vector<std::string> out;
  for (const auto& [n, f] : table) out.push_back(n);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

const Registry& Registry::Builtins() {
  static const Registry* builtins = [] {
    auto* r = new Registry();
    absl::Status st = RegisterBuiltinPlugins(*r);
    if (st.ok()) st = RegisterBuiltinActions(*r);
    if (!st.ok()) {  // two built-ins with one name: a programming error
      std::fprintf(stderr, "volcanic: %s\n", st.ToString().c_str());
      std::abort();
    }
    return r;
  }();
  return *builtins;
}

absl::Status Registry::AddPlugin(const std::string& name, PluginFactory factory) {
  return Add(plugins_, "plugin", name, std::move(factory));
}

absl::Status Registry::AddAction(const std::string& name, ActionFactory factory) {
  return Add(actions_, "action", name, std::move(factory));
}

absl::StatusOr<std::unique_ptr<Plugin>> Registry::BuildPlugin(const std::string& name,
                                                              const Arguments& args) const {
  if (const PluginFactory* f = Find(plugins_, name)) return (*f)(args);
  return ConfigError(absl::StrCat("unknown plugin \"", name, "\"; known plugins: ",
                                  absl::StrJoin(PluginNames(), ", ")));
}

absl::StatusOr<std::unique_ptr<Action>> Registry::BuildAction(const std::string& name,
                                                              const Arguments& args) const {
  if (const ActionFactory* f = Find(actions_, name)) return (*f)(args);
  return ConfigError(absl::StrCat("unknown action \"", name, "\"; known actions: ",
                                  absl::StrJoin(ActionNames(), ", ")));
}

std::vector<std::string> Registry::PluginNames() const { return Names(plugins_); }
std::vector<std::string> Registry::ActionNames() const { return Names(actions_); }

}  // namespace volcanic
