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
  void append(std::span<const T> src, int64_t expected, const char* name) {
    if (expected < 0 || src.size() != static_cast<size_t>(expected)) {
      throw Error(std::string("graph: ") + name + " holds " + std::to_string(src.size()) +
                  " values, expected " + std::to_string(expected));
    }
    if (src.size() > dst_.size() - used_) throw Error("graph: weight copies overflow");
    while (!src.empty()) {
      const auto address = reinterpret_cast<uintptr_t>(src.data());
      const size_t to_boundary = (kPieceBytes - address % kPieceBytes) / sizeof(T);
      const size_t n = std::max<size_t>(1, std::min(src.size(), to_boundary));
      std::copy_n(src.begin(), n, dst_.begin() + static_cast<std::ptrdiff_t>(used_));
      used_ += n;
      copied_(std::as_bytes(src.first(n)));
      src = src.subspan(n);
    }
  }

 private:
  std::span<T> dst_;
  const CopiedFn& copied_;
  size_t used_ = 0;
};

}  // namespace llama::graph
