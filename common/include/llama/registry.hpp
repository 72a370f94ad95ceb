// The registry of backends by name: built-in and user backends register a
// factory; wrappers register a factory that wraps another backend, so
// "counting:graph" is the counting wrapper around the graph backend. Plugins
// (llama/plugins/) add theirs at run time; every entry records where it came from.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "llama/backend.hpp"

namespace llama {

using BackendFactory = std::function<std::unique_ptr<InferenceBackend>(const BackendOptions&)>;
using WrapperFactory = std::function<std::unique_ptr<InferenceBackend>(
    std::unique_ptr<InferenceBackend> inner, const BackendOptions&)>;

struct RegistryEntry {
  std::string name;
  std::string description;
  bool is_wrapper = false;
  std::string origin;  // empty: built into the program; else the plugin file it came from
};

// A plugin loaded into this process (llama/plugins/loader.hpp).
struct LoadedPlugin {
  std::string name;                   // the plugin's own name
  std::string file;                   // its canonical path
  std::vector<std::string> backends;  // what it registered
  std::vector<std::string> wrappers;
};

class PluginRegistrar;

class BackendRegistry {
 public:
  static BackendRegistry& instance();

  // Throws Error if the name is taken or malformed (empty, or containing ':').
  void add_backend(const std::string& name, const std::string& description, BackendFactory factory);
  void add_wrapper(const std::string& name, const std::string& description, WrapperFactory factory);

  // Creates from a spec "name" or "wrapper:spec"; throws Error naming an
  // unknown backend and listing the known ones.
  std::unique_ptr<InferenceBackend> create(const std::string& spec,
                                           const BackendOptions& options = {}) const;
  bool contains(const std::string& name) const;
  std::vector<RegistryEntry> entries() const;      // sorted by name
  std::vector<std::string> backend_names() const;  // non-wrappers only

  // Adds a plugin and what it registered (`plugin.file` becomes their origin): the
  // plugin's name and every entry's are checked first, then all are added, or none
  // (Error naming the first problem). Fills plugin.backends and plugin.wrappers.
  void add_plugin(LoadedPlugin plugin, const PluginRegistrar& registered);
  const std::vector<LoadedPlugin>& plugins() const { return plugins_; }

  // While `into` is set, add_backend and add_wrapper record into it instead (a
  // plugin's static registrars as it loads, checked with the rest by add_plugin).
  void capture_registrations(PluginRegistrar* into) { capture_ = into; }

 private:
  void check_available(const std::string& name) const;

  std::map<std::string, BackendFactory> backends_;
  std::map<std::string, WrapperFactory> wrappers_;
  std::map<std::string, std::string> descriptions_;
  std::map<std::string, std::string> origins_;  // plugin entries only
  std::vector<LoadedPlugin> plugins_;
  PluginRegistrar* capture_ = nullptr;
};

// For static registration in a backend's translation unit:
//   static const llama::BackendRegistrar reg{"blas", "...", factory};
struct BackendRegistrar {
  BackendRegistrar(const std::string& name, const std::string& description,
                   BackendFactory factory) {
    BackendRegistry::instance().add_backend(name, description, std::move(factory));
  }
};
struct WrapperRegistrar {
  WrapperRegistrar(const std::string& name, const std::string& description,
                   WrapperFactory factory) {
    BackendRegistry::instance().add_wrapper(name, description, std::move(factory));
  }
};

}  // namespace llama
