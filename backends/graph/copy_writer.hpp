// Filling a weight copy front to back from the originals, handing each piece
// of an original to a callback once it is copied (the backend drops its pages
// there, so originals and copies are never all resident).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "llama/error.hpp"
#include "llama/tensor.hpp"

namespace llama::graph {

using CopiedFn = std::function<void(std::span<const std::byte>)>;

// Runs copy_part(0) .. copy_part(parts - 1), in any order, possibly at once.
using PartsFn = std::function<void(int64_t parts, const std::function<void(int64_t)>& copy_part)>;

inline void run_parts_in_order(int64_t parts, const std::function<void(int64_t)>& copy_part) {
  for (int64_t p = 0; p < parts; ++p) copy_part(p);
}

template <typename T>
class CopyWriter {
  // Pieces end on 4 MiB boundaries of the source: peak RSS stays at the copies
  // plus one piece, even for a 100 MB classifier, and no page straddles two.
  static constexpr uintptr_t kPieceBytes = uintptr_t{4} << 20;

 public:
  CopyWriter(std::span<T> dst, const CopiedFn& copied) : dst_(dst), copied_(copied) {}

  // Throws Error naming `name` when `src` is not `expected` elements long.
  void append(std::span<const T> src, int64_t expected, const std::string& name) {
    check(src.size(), expected, name);
    while (!src.empty()) {
      const size_t n = piece(src.data(), sizeof(T), src.size());
      std::copy_n(src.begin(), n, dst_.begin() + static_cast<std::ptrdiff_t>(used_));
      used_ += n;
      copied_(std::as_bytes(src.first(n)));
      src = src.subspan(n);
    }
  }

  // `t`'s f32 values, `expected` of them (Tensor::f32 throws for another
  // dtype: bf16/f16 and block dtypes are copied byte for byte through append).
  void append_f32(const Tensor& t, int64_t expected) requires std::is_same_v<T, float> {
    append(t.f32(), expected, t.name);
  }

 private:
  void check(size_t size, int64_t expected, const std::string& name) const {
    if (expected < 0 || size != static_cast<size_t>(expected)) {
      throw Error("graph: " + name + " holds " + std::to_string(size) + " values, expected " +
                  std::to_string(expected));
    }
    if (size > dst_.size() - used_) throw Error("graph: weight copies overflow");
  }
  // Elements of `elem_bytes` from `p` up to the next piece boundary (at least one).
  static size_t piece(const void* p, size_t elem_bytes, size_t available) {
    const auto address = reinterpret_cast<uintptr_t>(p);
    const size_t to_boundary = (kPieceBytes - address % kPieceBytes) / elem_bytes;
    return std::max<size_t>(1, std::min(available, to_boundary));
  }

  std::span<T> dst_;
  const CopiedFn& copied_;
  size_t used_ = 0;
};

}  // namespace llama::graph
