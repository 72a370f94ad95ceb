// Row permutations between the interleaved and rotate_half q/k layouts.
#include "llama/formats/rotary_rows.hpp"

#include <cstring>
#include <string>

#include "llama/checked_math.hpp"
#include "llama/error.hpp"

namespace llama {
namespace {

void check(std::span<const std::byte> src, std::span<std::byte> dst, int64_t n_heads,
           int64_t head_dim, int64_t row_bytes) {
  if (n_heads <= 0 || head_dim <= 0 || head_dim % 2 != 0 || row_bytes < 0) {
    throw Error("rotary row permutation: n_heads " + std::to_string(n_heads) + ", head_dim " +
                std::to_string(head_dim) + " (must be positive and even)");
  }
  const int64_t bytes =
      checked_mul(checked_mul(n_heads, head_dim, "rotary rows"), row_bytes, "rotary rows");
  if (static_cast<int64_t>(src.size()) != bytes || static_cast<int64_t>(dst.size()) != bytes) {
    throw Error("rotary row permutation: " + std::to_string(src.size()) + " -> " +
                std::to_string(dst.size()) + " bytes, expected " + std::to_string(bytes));
  }
}

// `to_interleaved`: dst (2i + j) <- src (j * half + i); else the reverse.
void permute(std::span<const std::byte> src, std::span<std::byte> dst, int64_t n_heads,
             int64_t head_dim, int64_t row_bytes, bool to_interleaved) {
  check(src, dst, n_heads, head_dim, row_bytes);
  const int64_t half = head_dim / 2;
  const auto row = static_cast<size_t>(row_bytes);
  for (int64_t h = 0; h < n_heads; ++h) {
    for (int64_t i = 0; i < half; ++i) {
      for (int64_t j = 0; j < 2; ++j) {
        const int64_t interleaved = h * head_dim + 2 * i + j;
        const int64_t halves = h * head_dim + j * half + i;
        const int64_t to = to_interleaved ? interleaved : halves;
        const int64_t from = to_interleaved ? halves : interleaved;
        std::memcpy(dst.data() + static_cast<size_t>(to) * row,
                    src.data() + static_cast<size_t>(from) * row, row);
      }
    }
  }
}

}  // namespace

void rotate_half_to_interleaved(std::span<const std::byte> src, std::span<std::byte> dst,
                                int64_t n_heads, int64_t head_dim, int64_t row_bytes) {
  permute(src, dst, n_heads, head_dim, row_bytes, true);
}

void interleaved_to_rotate_half(std::span<const std::byte> src, std::span<std::byte> dst,
                                int64_t n_heads, int64_t head_dim, int64_t row_bytes) {
  permute(src, dst, n_heads, head_dim, row_bytes, false);
}

}  // namespace llama
