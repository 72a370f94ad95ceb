// mmap/madvise behind HugePageArray.
#include "huge_page_buffer.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "llama/error.hpp"

namespace llama::graph::detail {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

size_t rounded(size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }

}  // namespace

size_t max_huge_page_bytes() { return SIZE_MAX - 2 * kHugePage; }

void* map_huge_pages(size_t bytes) {
  if (bytes > max_huge_page_bytes()) {
    throw Error("graph: a weight copy of " + std::to_string(bytes) + " bytes is too large");
  }
  const size_t size = rounded(bytes);
  // Over-map by one huge page, then unmap the unaligned head and the tail, so
  // the block starts on a 2 MiB boundary and huge pages can back all of it.
  void* raw =
      ::mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) {
    throw Error("graph: cannot map " + std::to_string(size) +
                " bytes for the weight copies: " + std::strerror(errno));
  }
  const auto begin = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (begin + kHugePage - 1) & ~(uintptr_t{kHugePage} - 1);
  if (aligned > begin) ::munmap(raw, aligned - begin);
  const uintptr_t tail = aligned + size, end = begin + size + kHugePage;
  if (end > tail) ::munmap(reinterpret_cast<void*>(tail), end - tail);
#ifdef MADV_HUGEPAGE
  ::madvise(reinterpret_cast<void*>(aligned), size, MADV_HUGEPAGE);  // a hint: failure is fine
#endif
  return reinterpret_cast<void*>(aligned);
}

void unmap_huge_pages(void* p, size_t bytes) noexcept { ::munmap(p, rounded(bytes)); }

}  // namespace llama::graph::detail
