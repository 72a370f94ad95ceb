// Writing a plugin: a shared library that adds backends and wrappers to a program at run
// time (llama-cli --plugin FILE, LLAMA_PLUGIN_PATH). It exports one extern "C" entry
// point, llama_plugin_entry, which returns a descriptor: the protocol version and
// toolchain it was built with, its name, and the function that registers its backends
// and wrappers. Write it with LLAMA_PLUGIN in one source file:
//
//   LLAMA_PLUGIN("mine", registrar) {
//     registrar.add_backend("mine", "what it is, in one line",
//                           [](const llama::BackendOptions& o) { return make_mine(o); });
//   }
//
// The host (llama/plugins/loader.hpp) checks the protocol and toolchain before it calls
// anything else, then calls the registration function and adds every entry to the
// registry, or none. What a protocol version promises: docs/backends.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>
#include <version>

#include "llama/registry.hpp"
#include "llama/version.hpp"

// The plugin protocol: the descriptor below, PluginRegistrar, BackendOptions,
// InferenceBackend's layout (its size and virtual functions) and its contract
// (docs/backends.md). Bumped whenever one of them changes; tests/test_plugin_abi.cpp
// pins the layout it stands for. 3: forward at a position already run (a rewind)
// discards the cache from there (2 promised positions in order). 4: BackendOptions
// gained `numerics` (3's was `threads` alone, 4 bytes). 5: BackendOptions gained
// `kv_cache` (the KV cache's dtype, llama/kv_cache.hpp; 12 bytes). 6: many sequences
// per call: InferenceBackend gained sequences(), forward_runs (llama/sequence_runs.hpp) and
// batch_invariant(),
// BackendOptions `sequences` and `context` (24 bytes), and a wrapper must forward both.
#define LLAMA_PLUGIN_PROTOCOL 6u

#define LLAMA_PLUGIN_STRINGIFY_(x) #x
#define LLAMA_PLUGIN_STRINGIFY(x) LLAMA_PLUGIN_STRINGIFY_(x)

// The C++ ABI and standard library a translation unit is compiled for. A plugin and its
// host share std::string, std::function and std::unique_ptr across the boundary, so both
// must agree: the same standard library, major release and string ABI. GCC and Clang
// both follow the Itanium ABI with libstdc++, so either compiler may build a plugin.
#if defined(_LIBCPP_VERSION)
#define LLAMA_PLUGIN_STDLIB "libc++ (ABI " LLAMA_PLUGIN_STRINGIFY(_LIBCPP_ABI_VERSION) ")"
#elif defined(__GLIBCXX__)
#if defined(_GLIBCXX_DEBUG)
#define LLAMA_PLUGIN_STDLIB_MODE ", debug mode"
#else
#define LLAMA_PLUGIN_STDLIB_MODE ""
#endif
#define LLAMA_PLUGIN_GLIBCXX_RELEASE LLAMA_PLUGIN_STRINGIFY(_GLIBCXX_RELEASE)
#define LLAMA_PLUGIN_GLIBCXX_ABI LLAMA_PLUGIN_STRINGIFY(_GLIBCXX_USE_CXX11_ABI)
#define LLAMA_PLUGIN_STDLIB                 \
  "libstdc++ " LLAMA_PLUGIN_GLIBCXX_RELEASE \
  " (cxx11 ABI " LLAMA_PLUGIN_GLIBCXX_ABI LLAMA_PLUGIN_STDLIB_MODE ")"
#else
#define LLAMA_PLUGIN_STDLIB "an unknown standard library"
#endif
#if defined(__GXX_ABI_VERSION)
#define LLAMA_PLUGIN_TOOLCHAIN "Itanium C++ ABI, " LLAMA_PLUGIN_STDLIB
#else
#define LLAMA_PLUGIN_TOOLCHAIN "unknown C++ ABI, " LLAMA_PLUGIN_STDLIB
#endif

namespace llama {

// What a plugin registers. The host hands one to the plugin's registration function,
// then checks every name and adds all entries to the registry, or none (a name that is
// taken or malformed refuses the whole plugin).
class PluginRegistrar {
 public:
  struct Entry {
    std::string name;
    std::string description;
    BackendFactory backend;  // set for a backend
    WrapperFactory wrapper;  // set for a wrapper
  };

  void add_backend(const std::string& name, const std::string& description, BackendFactory factory);
  void add_wrapper(const std::string& name, const std::string& description, WrapperFactory factory);
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  std::vector<Entry> entries_;
};

}  // namespace llama

extern "C" {

// What llama_plugin_entry returns. `protocol` and `toolchain` stay the first two fields
// in every protocol version, so a host reads them before it trusts the rest.
struct llama_plugin_descriptor {
  uint32_t protocol;         // LLAMA_PLUGIN_PROTOCOL the plugin was built for
  const char* toolchain;     // LLAMA_PLUGIN_TOOLCHAIN as the plugin was compiled
  const char* name;          // the plugin's name, e.g. "eigen"
  const char* core_version;  // LLAMA_BACKENDS_VERSION of the headers it was built with
  void (*register_entries)(llama::PluginRegistrar& registrar);  // may throw
};

// The entry point every plugin exports. It only returns a pointer to a constant.
__attribute__((visibility("default"))) const llama_plugin_descriptor* llama_plugin_entry(void);

}  // extern "C"

#define LLAMA_PLUGIN_ENTRY_SYMBOL "llama_plugin_entry"

// Defines the entry point of plugin `plugin_name` (a string literal); the braces that
// follow are its registration function, with `registrar` the PluginRegistrar.
#define LLAMA_PLUGIN(plugin_name, registrar)                                                \
  static void llama_plugin_register_entries_(::llama::PluginRegistrar& registrar);          \
  extern "C" __attribute__((visibility("default"))) const ::llama_plugin_descriptor*        \
  llama_plugin_entry(void) {                                                                \
    static const ::llama_plugin_descriptor descriptor = {                                   \
        LLAMA_PLUGIN_PROTOCOL, LLAMA_PLUGIN_TOOLCHAIN, plugin_name, LLAMA_BACKENDS_VERSION, \
        &llama_plugin_register_entries_};                                                   \
    return &descriptor;                                                                     \
  }                                                                                         \
  static void llama_plugin_register_entries_([[maybe_unused]] ::llama::PluginRegistrar& registrar)
