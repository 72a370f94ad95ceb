// Loading plugins into a program: one file (--plugin FILE), or every
// libllama-plugin-*.so in the directories of LLAMA_PLUGIN_PATH. Each refusal is a
// llama::Error "plugin FILE: <reason>" and leaves the registry as it was: a missing
// file, one that is not a shared library or cannot be loaded, no llama_plugin_entry,
// another protocol version, another compiler ABI or standard library, a second copy of
// the core, a registration function that throws, or a name already taken.
// Loaded plugins stay loaded until the process exits (backends they created may live
// until then).
#pragma once

#include <string>
#include <vector>

#include "llama/registry.hpp"  // LoadedPlugin

namespace llama {

// Loads `file` and registers its backends and wrappers. The same file again (by
// canonical path) is loaded once: the second call returns the first's result.
LoadedPlugin load_plugin(const std::string& file);

// Every libllama-plugin-*.so in each directory of the colon-separated `directories`
// (empty entries skipped), each directory in name order. A directory that does not
// exist is an Error naming `what` (e.g. "LLAMA_PLUGIN_PATH").
std::vector<LoadedPlugin> load_plugin_directories(const std::string& directories,
                                                  const std::string& what);

// load_plugin_directories($LLAMA_PLUGIN_PATH, "LLAMA_PLUGIN_PATH"); nothing when unset.
std::vector<LoadedPlugin> load_plugins_from_environment();

}  // namespace llama
