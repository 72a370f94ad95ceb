// dequantize_rows for every dtype (GGUF blocks through kernels/numbers/gguf_blocks.hpp).
#include "llama/kernels/numbers/dequantize.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "llama/error.hpp"
#include "llama/kernels/numbers/half.hpp"
#include "llama/kernels/products/gguf_products.hpp"

namespace llama {
namespace {

// 16-bit floats at any alignment: a safetensors tensor may start at an odd
// byte. Aligned rows (the usual case) take half.hpp's dispatched row
// conversion (Rows), the others one value at a time (Widen): the same values.
template <float (*Widen)(uint16_t), void (*Rows)(std::span<const uint16_t>, std::span<float>)>
void widen(std::span<const std::byte> in, std::span<float> out) {
  if (reinterpret_cast<uintptr_t>(in.data()) % alignof(uint16_t) == 0) {
    Rows({reinterpret_cast<const uint16_t*>(in.data()), out.size()}, out);
    return;
  }
  for (size_t i = 0; i < out.size(); ++i) {
    uint16_t v;
    std::memcpy(&v, in.data() + 2 * i, sizeof v);
    out[i] = Widen(v);
  }
}

}  // namespace

void dequantize_rows(const Tensor& t, int64_t row_begin, int64_t row_end, std::span<float> out) {
  const int64_t cols = t.cols();
  if (row_begin < 0 || row_end > t.rows() || row_begin > row_end ||
      static_cast<int64_t>(out.size()) < (row_end - row_begin) * cols) {
    throw Error("tensor " + t.name + ": rows [" + std::to_string(row_begin) + ", " +
                std::to_string(row_end) + ") of " + std::to_string(t.rows()) + " into " +
                std::to_string(out.size()) + " floats");
  }
  const auto first = static_cast<size_t>(row_begin * cols);
  const auto n = static_cast<size_t>((row_end - row_begin) * cols);
  switch (t.dtype) {
    case DType::f32: {
      const auto v = t.f32().subspan(first, n);
      std::copy(v.begin(), v.end(), out.begin());
      return;
    }
    case DType::bf16:
      widen<bf16_to_f32, bf16_to_f32>(t.data.subspan(2 * first, 2 * n), out.first(n));
      return;
    case DType::f16:
      widen<f16_to_f32, f16_to_f32>(t.data.subspan(2 * first, 2 * n), out.first(n));
      return;
    case DType::q8_0: {
      const auto values = t.q8_values();
      const auto scales = t.q8_scales();
      const auto gs = static_cast<size_t>(t.group_size);
      for (size_t i = 0; i < n; ++i) {
        out[i] = static_cast<float>(values[first + i]) * scales[(first + i) / gs];
      }
      return;
    }
    case DType::block_q8_0:
    case DType::q4_0:
    case DType::q4_k:
    case DType::q6_k:
    case DType::q4_1:
    case DType::q5_0:
    case DType::q5_1:
    case DType::q5_k:
    case DType::q3_k:
    case DType::q2_k:
      // ggml's dequantize_row_* (kernels/numbers/gguf_blocks.hpp), checked against it by hash.
      dequantize_rows(block_matrix(t), row_begin, row_end, out);
      return;
  }
  throw Error("tensor " + t.name + ": no dequantization for " + to_string(t.dtype));
}

void dequantize(const Tensor& t, std::span<float> out) { dequantize_rows(t, 0, t.rows(), out); }

void embedding_row(const Tensor& table, int64_t token, std::span<float> out) {
  if (token < 0 || token >= table.rows()) {
    throw Error("token " + std::to_string(token) + " outside the embedding table " + table.name +
                " of " + std::to_string(table.rows()) + " rows");
  }
  dequantize_rows(table, token, token + 1, out);
}

}  // namespace llama
