// BackendRegistry: the project's one piece of global mutable state.
#include "llama/registry.hpp"

#include "llama/error.hpp"

namespace llama {
namespace {

void check_name(const std::string& name, const std::map<std::string, std::string>& taken) {
  if (name.empty() || name.find(':') != std::string::npos || name.find(',') != std::string::npos) {
    throw Error("backend name '" + name + "' must be non-empty without ':' or ','");
  }
  if (taken.count(name) != 0) throw Error("backend name '" + name + "' is already registered");
}

}  // namespace

BackendRegistry& BackendRegistry::instance() {
  static BackendRegistry registry;
  return registry;
}

void BackendRegistry::add_backend(const std::string& name, const std::string& description,
                                  BackendFactory factory) {
  check_name(name, descriptions_);
  backends_[name] = std::move(factory);
  descriptions_[name] = description;
}

void BackendRegistry::add_wrapper(const std::string& name, const std::string& description,
                                  WrapperFactory factory) {
  check_name(name, descriptions_);
  wrappers_[name] = std::move(factory);
  descriptions_[name] = description;
}

std::unique_ptr<InferenceBackend> BackendRegistry::create(const std::string& spec,
                                                          const BackendOptions& options) const {
  const auto colon = spec.find(':');
  if (colon != std::string::npos) {
    const std::string wrapper = spec.substr(0, colon);
    const auto it = wrappers_.find(wrapper);
    if (it == wrappers_.end()) {
      throw Error("unknown backend wrapper '" + wrapper + "' in '" + spec + "'");
    }
    return it->second(create(spec.substr(colon + 1), options), options);
  }
  const auto it = backends_.find(spec);
  if (it == backends_.end()) {
    std::string known;
    for (const auto& [name, factory] : backends_) known += (known.empty() ? "" : ", ") + name;
    throw Error("unknown backend '" + spec + "' (known: " + known + ")");
  }
  return it->second(options);
}

bool BackendRegistry::contains(const std::string& name) const {
  return descriptions_.count(name) != 0;
}

std::vector<RegistryEntry> BackendRegistry::entries() const {
  std::vector<RegistryEntry> out;
  for (const auto& [name, description] : descriptions_) {
    out.push_back({name, description, wrappers_.count(name) != 0});
  }
  return out;
}

std::vector<std::string> BackendRegistry::backend_names() const {
  std::vector<std::string> out;
  for (const auto& [name, factory] : backends_) out.push_back(name);
  return out;
}

}  // namespace llama
