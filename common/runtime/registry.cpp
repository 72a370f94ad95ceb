// BackendRegistry: the project's one piece of global mutable state (the backends,
// wrappers and plugins of this process).
#include "llama/registry.hpp"

#include <set>

#include "llama/error.hpp"
#include "llama/plugins/plugin.hpp"
#include "llama/replay_sequences.hpp"

namespace llama {
namespace {

void check_well_formed(const std::string& name) {
  if (name.empty() || name.find(':') != std::string::npos || name.find(',') != std::string::npos) {
    throw Error("backend name '" + name + "' must be non-empty without ':' or ','");
  }
}

}  // namespace

BackendRegistry& BackendRegistry::instance() {
  static BackendRegistry registry;
  return registry;
}

void BackendRegistry::check_available(const std::string& name) const {
  check_well_formed(name);
  if (descriptions_.count(name) == 0) return;
  const auto origin = origins_.find(name);
  throw Error("backend name '" + name + "' is already registered (" +
              (origin == origins_.end() ? std::string("built in") : "by plugin " + origin->second) +
              ")");
}

void BackendRegistry::add_backend(const std::string& name, const std::string& description,
                                  BackendFactory factory) {
  if (capture_ != nullptr) return capture_->add_backend(name, description, std::move(factory));
  check_available(name);
  backends_[name] = std::move(factory);
  descriptions_[name] = description;
}

void BackendRegistry::add_wrapper(const std::string& name, const std::string& description,
                                  WrapperFactory factory) {
  if (capture_ != nullptr) return capture_->add_wrapper(name, description, std::move(factory));
  check_available(name);
  wrappers_[name] = std::move(factory);
  descriptions_[name] = description;
}

void BackendRegistry::add_plugin(LoadedPlugin plugin, const PluginRegistrar& registered) {
  if (plugin.name.empty()) throw Error("the plugin's name is empty");
  for (const LoadedPlugin& p : plugins_) {
    if (p.name == plugin.name) {
      throw Error("plugin name '" + plugin.name + "' is already taken by " + p.file);
    }
  }
  std::set<std::string> names;
  for (const PluginRegistrar::Entry& e : registered.entries()) {
    check_available(e.name);
    if (!names.insert(e.name).second) throw Error("registers '" + e.name + "' twice");
  }
  plugin.backends.clear();
  plugin.wrappers.clear();
  for (const PluginRegistrar::Entry& e : registered.entries()) {
    if (e.backend) {
      backends_[e.name] = e.backend;
      plugin.backends.push_back(e.name);
    } else {
      wrappers_[e.name] = e.wrapper;
      plugin.wrappers.push_back(e.name);
    }
    descriptions_[e.name] = e.description;
    origins_[e.name] = plugin.file;
  }
  plugins_.push_back(std::move(plugin));
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
    std::unique_ptr<InferenceBackend> inner = create(spec.substr(colon + 1), options);
    const int32_t held = inner->sequences();
    std::unique_ptr<InferenceBackend> wrapped = it->second(std::move(inner), options);
    // A wrapper that does not pass sequences() on would lose the inner backend's
    // batching without a word: refused.
    if (wrapped->sequences() != held) {
      throw Error("wrapper '" + wrapper + "' says its backend holds " +
                  std::to_string(wrapped->sequences()) + " sequences, but " +
                  spec.substr(colon + 1) + " holds " + std::to_string(held) +
                  " (a wrapper forwards sequences() and forward_runs: plugin protocol 6)");
    }
    return wrapped;
  }
  const auto it = backends_.find(spec);
  if (it == backends_.end()) {
    std::string known;
    for (const auto& [name, factory] : backends_) known += (known.empty() ? "" : ", ") + name;
    throw Error("unknown backend '" + spec + "' (known: " + known + ")");
  }
  std::unique_ptr<InferenceBackend> backend = it->second(options);
  if (options.sequences != 1 && backend->sequences() == 1) {
    return replay_sequences(std::move(backend), options);  // one after another on one cache
  }
  if (backend->sequences() != options.sequences) {
    throw Error("backend '" + spec + "' holds " + std::to_string(backend->sequences()) +
                " sequences when asked for " + std::to_string(options.sequences));
  }
  return backend;
}

bool BackendRegistry::contains(const std::string& name) const {
  return descriptions_.count(name) != 0;
}

std::vector<RegistryEntry> BackendRegistry::entries() const {
  std::vector<RegistryEntry> out;
  for (const auto& [name, description] : descriptions_) {
    const auto origin = origins_.find(name);
    out.push_back({name, description, wrappers_.count(name) != 0,
                   origin == origins_.end() ? std::string() : origin->second});
  }
  return out;
}

std::vector<std::string> BackendRegistry::backend_names() const {
  std::vector<std::string> out;
  for (const auto& [name, factory] : backends_) out.push_back(name);
  return out;
}

}  // namespace llama
