// The numerics policy a backend runs a model under.
// - exact (the default): bf16/f16 weights take their exact f32 values (bf16 ->
//   f32 is a shift) and all arithmetic is f32, so the logits are the f32
//   computation on the upcast weights up to summation order.
// - fast: prefill's products with bf16 weights may round their activations to
//   bf16 and run on the CPU's bf16 dot-product units (oneDNN's matmul: AVX512-BF16
//   vdpbf16ps, AMX-BF16 tiles where the CPU has them), products and sums in f32 inside
//   the unit, as llama.cpp and PyTorch's CPU bf16 path do. Everything else
//   (decode's products, norms, attention, f32 and quantized weights) stays as
//   under exact. Each result then differs from exact's by at most
//   2^-8 * sum |w_k x_k| (kernels/products/half_products.hpp).
// GGUF's block-quantized weights take llama.cpp's own arithmetic under both
// (its activation quantization and int8 products: docs/formats.md).
#pragma once

#include <string>

namespace llama {

enum class Numerics { exact, fast };

const char* to_string(Numerics n);  // "exact", "fast"
// "exact" or "fast"; throws Error naming `what` (a flag, say) otherwise.
Numerics parse_numerics(const std::string& text, const std::string& what);

}  // namespace llama
