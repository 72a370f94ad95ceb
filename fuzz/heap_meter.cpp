// The replaced global operator new/delete behind HeapMeter (heap_meter.hpp).
// Every form is replaced, nothrow and aligned ones included, so that each
// allocation and release goes through the same malloc/free pair (ASan reports a
// mismatch otherwise). Sizes come from malloc_usable_size at both ends, which
// under ASan is the size asked for, so the count is exact.
#include "heap_meter.hpp"

#include <malloc.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>

namespace {

// Only the thread that made the meter counts (libFuzzer's own threads do not).
thread_local fuzz::HeapCount* t_meter = nullptr;

[[noreturn]] void over_bound(fuzz::HeapCount& m, std::size_t n) {
  t_meter = nullptr;
  std::fprintf(stderr,
               "FUZZ_CHECK failed: %s holds %lld bytes on the heap and asks for %zu more, above "
               "the bound of %lld\n",
               m.what, static_cast<long long>(m.live), n, static_cast<long long>(m.bound));
  std::abort();
}

void* counted_alloc(std::size_t n, std::size_t align) {
  fuzz::HeapCount* m = t_meter;
  // Checked before malloc: a header-sized request (100s of GB) would fail in the
  // allocator first, and not name what asked.
  if (m != nullptr && n > static_cast<std::size_t>(std::max<int64_t>(m->bound - m->live, 0))) {
    over_bound(*m, n);
  }
  const std::size_t size = n == 0 ? 1 : n;
  void* p = align > alignof(std::max_align_t)
                ? std::aligned_alloc(align, (size + align - 1) / align * align)
                : std::malloc(size);
  if (p == nullptr) throw std::bad_alloc();
  if (m != nullptr) {
    m->live += static_cast<int64_t>(malloc_usable_size(p));
    if (m->live > m->peak) m->peak = m->live;
  }
  return p;
}

// Out of line, so that GCC does not see free() of operator new's memory
// (-Wmismatched-new-delete): every operator new here returns malloc's memory.
[[gnu::noinline]] void counted_free(void* p) noexcept {
  if (p == nullptr) return;
  if (fuzz::HeapCount* m = t_meter) m->live -= static_cast<int64_t>(malloc_usable_size(p));
  std::free(p);
}

}  // namespace

namespace fuzz {

HeapMeter::HeapMeter(size_t bound_bytes, const char* what)
    : count_{0, 0, static_cast<int64_t>(bound_bytes), what}, outer_(t_meter) {
  t_meter = &count_;
}

HeapMeter::~HeapMeter() { t_meter = outer_; }

}  // namespace fuzz

void* operator new(std::size_t n) { return counted_alloc(n, 0); }
void* operator new[](std::size_t n) { return counted_alloc(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) {
  return counted_alloc(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return counted_alloc(n, static_cast<std::size_t>(a));
}
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
