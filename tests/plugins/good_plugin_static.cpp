// The good test plugin's static registration: while the plugin loads, the host
// captures it and checks it with the rest.
#include "llama/plugins/plugin.hpp"

namespace {

const llama::BackendRegistrar kRegistrar{
    "test-plugin-static", "registered by a static BackendRegistrar in a plugin",
    [](const llama::BackendOptions& o) {
      return llama::BackendRegistry::instance().create("reference", o);
    }};

}  // namespace
