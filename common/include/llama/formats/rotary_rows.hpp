// The two row orders of a q or k projection. llama2.c (and Meta's original
// checkpoints) rotate interleaved pairs: within each head, rows (2i, 2i + 1).
// Hugging Face's rotate_half rotates halves: rows (i, i + head_dim / 2), and
// its converter permutes Meta's rows into that order. These copy whole rows
// (any dtype: `row_bytes` per row) from one order to the other, as
// transformers' convert_llama_weights_to_hf.py `permute` and llama2.c's
// export.py `permute_reverse` do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace llama {

// dst row (h, 2i + j) = src row (h, j * head_dim / 2 + i): Hugging Face -> llama2.c.
// Throws Error unless both spans hold n_heads * head_dim rows of row_bytes and
// head_dim is even; src and dst must not overlap.
void rotate_half_to_interleaved(std::span<const std::byte> src, std::span<std::byte> dst,
                                int64_t n_heads, int64_t head_dim, int64_t row_bytes);

// The inverse: dst row (h, j * head_dim / 2 + i) = src row (h, 2i + j).
void interleaved_to_rotate_half(std::span<const std::byte> src, std::span<std::byte> dst,
                                int64_t n_heads, int64_t head_dim, int64_t row_bytes);

}  // namespace llama
