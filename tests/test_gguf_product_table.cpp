// GGUF's block dtypes in the core's product table (kernels/dispatch/product_table.hpp) that
// every backend composes: their input formats, matvec_rows against the
// exactly dequantized weights, and dispatch/product_table.hpp's contract that matmat_rows
// equals matvec_rows bit for bit, on the shared files' own tensors.
#include <catch2/catch.hpp>
#include <cmath>

#include "llama/formats/gguf_model.hpp"
#include "llama/kernels/dispatch/product_table.hpp"
#include "llama/kernels/numbers/dequantize.hpp"
#include "test_support.hpp"

using namespace llama;

namespace {

std::vector<float> inputs(int64_t n, uint32_t seed) {
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) {
    seed = seed * 1664525u + 1013904223u;
    v = static_cast<float>(static_cast<int32_t>(seed >> 8) % 2001 - 1000) / 700.0f;
  }
  return x;
}

std::vector<KernelSet> kernels() { return test::runnable_kernel_sets("GGUF product table"); }

// One tensor of each block dtype from the shared files.
std::vector<std::pair<gguf::GgufModel, Tensor LayerWeights::*>> samples() {
  std::vector<std::pair<gguf::GgufModel, Tensor LayerWeights::*>> s;
  s.emplace_back(gguf::open_model(test::model_path("gguf/stories1M.q8_0.gguf")), &LayerWeights::w2);
  s.emplace_back(gguf::open_model(test::model_path("gguf/stories1M.q4_0.gguf")), &LayerWeights::w1);
  s.emplace_back(gguf::open_model(test::model_path("gguf/rand-k.q4_k_m.gguf")), &LayerWeights::wq);
  s.emplace_back(gguf::open_model(test::model_path("gguf/rand-k.q6_k.gguf")), &LayerWeights::w3);
  s.emplace_back(gguf::open_model(test::model_path("gguf/rand-k.q3_k_m.gguf")), &LayerWeights::wq);
  s.emplace_back(gguf::open_model(test::model_path("gguf/rand-k.q2_k.gguf")), &LayerWeights::wq);
  return s;
}

}  // namespace

TEST_CASE("gguf product table: every block dtype has kernels", "[gguf][kernels]") {
  const DTypeSet d = product_dtypes();
  for (DType t : {DType::q8_0, DType::block_q8_0, DType::q4_0, DType::q4_k, DType::q6_k,
                  DType::q3_k, DType::q2_k}) {
    CHECK(d.contains(t));
  }
  // bf16 and f16 too: read in place (kernels/products/half_products.hpp, test_half_products.cpp).
  CHECK(d.contains(DType::f16));
  CHECK(d.contains(DType::bf16));
}

TEST_CASE("gguf product table: products against the exact weights, batch equal to decode",
          "[gguf][kernels]") {
  const auto models = samples();
  std::vector<DType> seen;
  for (const auto& [g, member] : models) {
    const Tensor& w = g.model.weights.layers[1].*member;
    INFO(w.describe());
    seen.push_back(w.dtype);
    const InputFormat f = input_format(w);
    // llama.cpp's activation quantization: q8_0 blocks for Q8_0 and Q4_0, q8_K for
    // the K-quants.
    CHECK(f.quantized());
    if (w.dtype == DType::q4_k || w.dtype == DType::q6_k || w.dtype == DType::q3_k ||
        w.dtype == DType::q2_k) {
      CHECK(f == InputFormat{InputKind::q8_k_blocks, 256});
    }
    const int64_t rows = w.rows(), cols = w.cols();
    std::vector<float> dense(static_cast<size_t>(rows * cols));
    dequantize(w, dense);
    // Batches of each size a kernel splits differently (a few vectors, passes
    // of 4 tokens and what is left).
    for (const int64_t n : {2, 3, 5, 11}) {
      INFO("batch of " << n);
      const std::vector<float> xs = inputs(n * cols, static_cast<uint32_t>(cols + n));
      // The batch's inputs as products read them.
      BatchInputCache batch_cache;
      batch_cache.reserve(n, cols);
      batch_cache.set(xs, cols, n, cols);
      const ProductBatch batch = batch_cache.get(f);
      for (KernelSet kernel : kernels()) {
        INFO(to_string(kernel));
        std::vector<float> all(static_cast<size_t>(n * rows));
        matmat_rows(all, rows, w, batch, 0, rows, kernel);
        InputCache cache;
        cache.reserve(cols);
        for (int64_t t = 0; t < n; ++t) {
          const std::span<const float> x =
              std::span(xs).subspan(static_cast<size_t>(t * cols), cols);
          cache.set(x);
          const ProductInput in = cache.get(f);
          std::vector<float> one(static_cast<size_t>(rows));
          // Split in two row ranges: results do not depend on the range.
          matvec_rows(std::span(one).first(7), w, in, 0, 7, kernel);
          matvec_rows(std::span(one).subspan(7), w, in, 7, rows, kernel);
          CHECK(std::equal(one.begin(), one.end(), all.begin() + t * rows));
          // Against the dequantized weights in double: f32 rounding for f32 inputs;
          // quantized inputs also round x to int8 (half a step of max|x|/127 per block).
          double worst = 0, largest = 0;
          for (int64_t r = 0; r < rows; ++r) {
            double exact = 0, mass = 0;
            for (int64_t k = 0; k < cols; ++k) {
              exact += double(dense[size_t(r * cols + k)]) * double(x[size_t(k)]);
              mass += std::fabs(double(dense[size_t(r * cols + k)]));
            }
            worst = std::max(worst, std::fabs(one[size_t(r)] - exact) / mass);
            largest = std::max(largest, std::fabs(exact));
          }
          CHECK(largest > 0);
          CHECK(worst <= (f.quantized() ? 1.5 / 127 * 0.5 * 1.1 : 1e-5));
        }
      }
    }
  }
  CHECK(seen == std::vector<DType>{DType::block_q8_0, DType::q4_0, DType::q4_k, DType::q6_k,
                                   DType::q3_k, DType::q2_k});
}
