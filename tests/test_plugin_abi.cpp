// The plugin protocol's promise, pinned: LLAMA_PLUGIN_PROTOCOL stands for one layout of
// InferenceBackend (size, every virtual function's vtable slot, their number),
// BackendOptions and the descriptor. When this fails, the layout changed: bump
// LLAMA_PLUGIN_PROTOCOL (llama/plugins/plugin.hpp), pin the new layout below and say
// what changed in docs/backends.md ("Plugins"), so that old plugins are refused instead
// of calling through a vtable that no longer matches.
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

#include "llama/backend.hpp"
#include "llama/plugins/plugin.hpp"

using namespace llama;

namespace {

// The byte offset of a virtual function's slot in the vtable: in the Itanium C++ ABI a
// pointer to a virtual member function holds 1 + that offset.
template <typename Member>
std::ptrdiff_t vtable_slot(Member member) {
  static_assert(sizeof(Member) == 2 * sizeof(std::ptrdiff_t));
  std::ptrdiff_t representation[2];
  std::memcpy(representation, &member, sizeof representation);
  REQUIRE((representation[0] & 1) == 1);  // virtual
  return representation[0] - 1;
}

// How many virtual functions backend.hpp declares in InferenceBackend, counted in its
// text, so that one added at the end (which moves no existing slot) is caught too.
int declared_virtuals() {
  std::ifstream in(LLAMA_SOURCE_DIR "/common/include/llama/backend.hpp");
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  const auto begin = s.find("class InferenceBackend {");
  const auto end = s.find("\n};", begin);
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  const std::string body = s.substr(begin, end - begin);
  const std::regex virtual_decl(R"(^\s*virtual\s)", std::regex::multiline);
  return static_cast<int>(std::distance(
      std::sregex_iterator(body.begin(), body.end(), virtual_decl), std::sregex_iterator()));
}

}  // namespace

TEST_CASE("the plugin protocol version pins InferenceBackend's layout", "[plugins][abi]") {
  INFO(
      "InferenceBackend, BackendOptions or llama_plugin_descriptor changed: bump "
      "LLAMA_PLUGIN_PROTOCOL, pin the new layout in tests/test_plugin_abi.cpp and describe "
      "it in docs/backends.md");
  REQUIRE(LLAMA_PLUGIN_PROTOCOL == 6u);
  // Protocol 6: sequences(), forward_runs and batch_invariant() after forward_batch, a second vector
  // (run_logits_) in the base, BackendOptions gained sequences and context. Protocol 5
  // was the layout of 4 but BackendOptions, which gained kv_cache; 4 the layout of 3 but
  // BackendOptions, which gained numerics; 3 the layout of 2 (the contract gained
  // rewinds). Slots follow the two destructor entries (complete, deleting) at 0 and 8.
  CHECK(vtable_slot(&InferenceBackend::name) == 16);
  CHECK(vtable_slot(&InferenceBackend::supported_dtypes) == 24);
  CHECK(vtable_slot(&InferenceBackend::prepare) == 32);
  CHECK(vtable_slot(&InferenceBackend::forward) == 40);
  CHECK(vtable_slot(&InferenceBackend::forward_batch) == 48);
  CHECK(vtable_slot(&InferenceBackend::sequences) == 56);
  CHECK(vtable_slot(&InferenceBackend::forward_runs) == 64);
  CHECK(vtable_slot(&InferenceBackend::batch_invariant) == 72);
  CHECK(vtable_slot(&InferenceBackend::describe) == 80);
  CHECK(vtable_slot(&InferenceBackend::report) == 88);
  CHECK(declared_virtuals() == 11);       // the destructor and the ten above
  CHECK(sizeof(InferenceBackend) == 56);  // vtable pointer, batch_logits_, run_logits_
  CHECK(sizeof(BackendOptions) == 24);    // threads, numerics, kv_cache, sequences, context
  CHECK(offsetof(BackendOptions, numerics) == 4);
  CHECK(offsetof(BackendOptions, kv_cache) == 8);
  CHECK(offsetof(BackendOptions, sequences) == 12);
  CHECK(offsetof(BackendOptions, context) == 16);
  CHECK(sizeof(llama_plugin_descriptor) == 40);
  CHECK(offsetof(llama_plugin_descriptor, protocol) == 0);
  CHECK(offsetof(llama_plugin_descriptor, toolchain) == 8);
}
