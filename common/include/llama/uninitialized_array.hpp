// A fixed-size array whose elements start uninitialised, for the KV cache: at
// hundreds of MB (201 MB for the 340M shape), zero-filling it at prepare would
// take most of the load time and make all of it resident before one position
// is used. Untouched, a large allocation is fresh zero pages the kernel maps on
// first write; a backend writes each position's keys and values before any
// read of them, so no value needs a start.
#pragma once

#include <cstddef>
#include <memory>
#include <span>

namespace llama {

template <typename T>
class UninitializedArray {
 public:
  UninitializedArray() = default;
  explicit UninitializedArray(size_t n) : data_(std::make_unique_for_overwrite<T[]>(n)), size_(n) {}

  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  size_t size() const { return size_; }
  std::span<T> span() { return {data_.get(), size_}; }
  std::span<const T> span() const { return {data_.get(), size_}; }

 private:
  std::unique_ptr<T[]> data_;
  size_t size_ = 0;
};

}  // namespace llama
