// Any tensor's values in f32, exactly as its dtype defines them: one
// definition per dtype, used for embedding lookups, for upcasting at prepare,
// by the converter and by the reference backend as the oracle.
#pragma once

#include <cstdint>
#include <span>

#include "llama/tensor.hpp"

namespace llama {

// Rows [row_begin, row_end) of `t` (a vector is one row) into
// out[0, (row_end - row_begin) * t.cols()): f32 copied, bf16 and f16 widened,
// q8_0 as value * scale of its group, GGUF blocks as ggml dequantizes them. Throws Error on a range
// outside the tensor or an `out` too small.
void dequantize_rows(const Tensor& t, int64_t row_begin, int64_t row_end, std::span<float> out);

// Every value of `t`: out holds t.elements() floats.
void dequantize(const Tensor& t, std::span<float> out);

// Row `token` of an embedding table [vocab, dim] into out[0, dim); throws
// Error naming the table for a token outside [0, vocab).
void embedding_row(const Tensor& table, int64_t token, std::span<float> out);

}  // namespace llama
