// Owned arrays in transparent huge pages, for the weight copies decode streams
// every token. With 4 KiB pages that stream takes a TLB miss every 4 KiB,
// which holds one core's read rate well below what 2 MiB pages allow
// (docs/performance.md). A checkpoint's file mapping cannot get huge pages; a
// copy can. The block is mmap'ed at a 2 MiB boundary and
// madvise(MADV_HUGEPAGE)'d (transparent_hugepage=madvise is a common default);
// where the kernel declines, it is ordinary memory.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "llama/error.hpp"

namespace llama::graph {

namespace detail {
// `bytes` rounded up to 2 MiB, at a 2 MiB boundary; throws Error if mmap fails.
void* map_huge_pages(size_t bytes);
void unmap_huge_pages(void* p, size_t bytes) noexcept;
size_t max_huge_page_bytes();
}  // namespace detail

template <typename T>
class HugePageArray {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  HugePageArray() = default;
  explicit HugePageArray(size_t n)  // n uninitialised elements
      : data_(n == 0 ? nullptr : static_cast<T*>(detail::map_huge_pages(checked_bytes(n)))),
        size_(n) {}
  HugePageArray(HugePageArray&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  HugePageArray& operator=(HugePageArray&& other) noexcept {
    HugePageArray old(std::move(*this));
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    return *this;
  }
  HugePageArray(const HugePageArray&) = delete;
  HugePageArray& operator=(const HugePageArray&) = delete;
  ~HugePageArray() {
    if (data_ != nullptr) detail::unmap_huge_pages(data_, size_ * sizeof(T));
  }

  std::span<T> span() { return {data_, size_}; }
  std::span<const T> span() const { return {data_, size_}; }

 private:
  static size_t checked_bytes(size_t n);

  T* data_ = nullptr;
  size_t size_ = 0;
};

template <typename T>
size_t HugePageArray<T>::checked_bytes(size_t n) {
  if (n > detail::max_huge_page_bytes() / sizeof(T)) {
    throw Error("graph: a weight copy of " + std::to_string(n) + " elements is too large");
  }
  return n * sizeof(T);
}

}  // namespace llama::graph
