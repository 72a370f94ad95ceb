// No allocation per token: global operator new is replaced in this test
// executable to count calls, and forward must make none after the first call.
#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <new>

#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/registry.hpp"
#include "test_support.hpp"

namespace {
std::atomic<int64_t> g_allocations{0};

void* counted_alloc(std::size_t n, std::size_t align) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  const std::size_t size = n == 0 ? 1 : n;
  void* p = align > alignof(std::max_align_t)
                ? std::aligned_alloc(align, (size + align - 1) / align * align)
                : std::malloc(size);
  if (!p) throw std::bad_alloc();
  return p;
}

// Out of line, so that GCC, seeing free() inlined into a replaced operator delete
// that takes a pointer from operator new, does not call the pair mismatched
// (-Wmismatched-new-delete): here every operator new returns malloc's memory.
[[gnu::noinline]] void counted_free(void* p) noexcept { std::free(p); }
}  // namespace

void* operator new(std::size_t n) { return counted_alloc(n, 0); }
void* operator new[](std::size_t n) { return counted_alloc(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) {
  return counted_alloc(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return counted_alloc(n, static_cast<std::size_t>(a));
}
// The nothrow forms too (std::stable_sort's buffer uses them), so every
// allocation and release goes through the same pair.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted_alloc(n, 0);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  try {
    return counted_alloc(n, static_cast<std::size_t>(a));
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t& t) noexcept {
  return operator new(n, a, t);
}
void operator delete(void* p, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  counted_free(p);
}
void operator delete(void* p) noexcept { counted_free(p); }
void operator delete[](void* p) noexcept { counted_free(p); }
void operator delete(void* p, std::size_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::size_t) noexcept { counted_free(p); }
void operator delete(void* p, std::align_val_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { counted_free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { counted_free(p); }

namespace {

// The graph backend on `ck` with `threads`: after the first forward, a
// forward at every later position allocates nothing.
void check_no_allocation_per_token(const llama::Checkpoint& ck, int threads) {
  llama::BackendOptions o;
  o.threads = threads;
  auto graph = llama::BackendRegistry::instance().create("graph", o);
  graph->prepare(ck.model());
  graph->forward(1, 0);
  const int64_t before = g_allocations.load();
  float sink = 0;
  for (int64_t pos = 1; pos < ck.config().seq_len; ++pos) {
    sink += graph->forward(static_cast<int32_t>((pos * 7) % 500), pos)[0];
  }
  CHECK(g_allocations.load() == before);
  CHECK(std::isfinite(sink));
  // The counter works (a direct call cannot be elided).
  ::operator delete(::operator new(16));
  CHECK(g_allocations.load() == before + 1);
}

}  // namespace

TEST_CASE("graph: forward allocates nothing after the first call", "[graph][alloc]") {
  // stories260K runs to its last position, where attention goes parallel;
  // mini32k's classifier [32000x64] is split across threads at every token.
  for (const char* file : {"stories260K.bin", "mini32k.bin"}) {
    for (int threads : {1, 2}) {
      INFO(file << ", " << threads << " thread(s)");
      check_no_allocation_per_token(llama::Checkpoint::open(llama::test::model_path(file)),
                                    threads);
    }
  }
}

TEST_CASE("graph: Q8_0 forward allocates nothing after the first call", "[graph][alloc][q8]") {
  // The int8 plans quantize into the arena; the classifier [32000x128] is
  // split across threads at every token, attention goes parallel late.
  for (int threads : {1, 2}) {
    INFO(threads << " thread(s)");
    const llama::Checkpoint ck = llama::Checkpoint::open(llama::test::model_path("q-gqa.v2.bin"));
    REQUIRE(ck.model().weights.dtypes().contains(llama::DType::q8_0));
    check_no_allocation_per_token(ck, threads);
  }
}
