// Deliberately broken test plugins, one per refusal of the plugin loader; CMake builds
// this file once per case with LLAMA_TEST_PLUGIN_FAULT set (tests/plugins/CMakeLists.txt).
#include <stdexcept>

#include "llama/plugins/plugin.hpp"

#define FAULT(name) (LLAMA_TEST_PLUGIN_FAULT == LLAMA_FAULT_##name)
#define LLAMA_FAULT_no_entry 1
#define LLAMA_FAULT_protocol 2
#define LLAMA_FAULT_toolchain 3
#define LLAMA_FAULT_throws 4
#define LLAMA_FAULT_throws_int 5
#define LLAMA_FAULT_name_taken 6
#define LLAMA_FAULT_static_name_taken 7
#define LLAMA_FAULT_malformed_name 8
#define LLAMA_FAULT_twice 9
#define LLAMA_FAULT_undefined_symbol 10
#define LLAMA_FAULT_second_core 11
#define LLAMA_FAULT_taken_by_plugin 12

namespace {

[[maybe_unused]] std::unique_ptr<llama::InferenceBackend> reference(
    const llama::BackendOptions& o) {
  return llama::BackendRegistry::instance().create("reference", o);
}

[[maybe_unused]] void register_one(llama::PluginRegistrar& registrar) {
  registrar.add_backend("test-broken", "never registered", reference);
}

}  // namespace

#if FAULT(no_entry)
// A shared library with code but no llama_plugin_entry.
extern "C" __attribute__((visibility("default"))) int not_the_entry_point() { return 1; }

#elif FAULT(protocol) || FAULT(toolchain)
// A descriptor written by hand, as a plugin built against other headers would have it:
// the protocol before this one (a plugin not rebuilt since), or another standard library.
extern "C" __attribute__((visibility("default"))) const llama_plugin_descriptor* llama_plugin_entry(
    void) {
  static const llama_plugin_descriptor descriptor = {
      FAULT(protocol) ? LLAMA_PLUGIN_PROTOCOL - 1u : LLAMA_PLUGIN_PROTOCOL,
      FAULT(toolchain) ? "Itanium C++ ABI, libc++ (ABI 1)" : LLAMA_PLUGIN_TOOLCHAIN, "test-broken",
      LLAMA_BACKENDS_VERSION, &register_one};
  return &descriptor;
}

#elif FAULT(undefined_symbol)
// Calls a function no library defines: dlopen with RTLD_NOW refuses it.
extern "C" int llama_test_symbol_nobody_defines();
LLAMA_PLUGIN("test-broken", registrar) {
  if (llama_test_symbol_nobody_defines() != 0) register_one(registrar);
}

#elif FAULT(second_core)
// Linked against another libllama-core (a fake one with soname libllama-core.so.0.1).
extern "C" int llama_fake_core_function();
LLAMA_PLUGIN("test-broken", registrar) {
  if (llama_fake_core_function() != 0) register_one(registrar);
}

#elif FAULT(static_name_taken)
// A static registrar taking a built-in name: captured while loading, then refused.
const llama::BackendRegistrar kTaken{"reference", "a second reference", reference};
LLAMA_PLUGIN("test-broken", registrar) { register_one(registrar); }

#else
LLAMA_PLUGIN("test-broken", registrar) {
#if FAULT(throws)
  register_one(registrar);
  throw std::runtime_error("cannot find its weights");
#elif FAULT(throws_int)
  throw 42;
#elif FAULT(name_taken)
  register_one(registrar);
  registrar.add_backend("blas", "a second blas", reference);
#elif FAULT(malformed_name)
  registrar.add_backend("test:broken", "a name with a colon", reference);
#elif FAULT(taken_by_plugin)
  registrar.add_backend("test-plugin-reference", "the good test plugin's name", reference);
#elif FAULT(twice)
  register_one(registrar);
  register_one(registrar);
#else
#error unknown LLAMA_TEST_PLUGIN_FAULT
#endif
}
#endif
