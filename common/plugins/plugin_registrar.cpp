// PluginRegistrar: records what a plugin registers; BackendRegistry::add_plugin checks
// the names and adds the entries.
#include "llama/plugins/plugin.hpp"

namespace llama {

void PluginRegistrar::add_backend(const std::string& name, const std::string& description,
                                  BackendFactory factory) {
  entries_.push_back({name, description, std::move(factory), {}});
}

void PluginRegistrar::add_wrapper(const std::string& name, const std::string& description,
                                  WrapperFactory factory) {
  entries_.push_back({name, description, {}, std::move(factory)});
}

}  // namespace llama
