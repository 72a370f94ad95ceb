// The per-dtype product kernels backends compose: for a weight tensor whose
// dtype is not a float type, how its products read their f32 input (as is,
// or quantized into int8 groups first), and the row-range matrix-vector and
// matrix-matrix kernels. Backends keep their own f32 engines (BLAS, graph
// GEMM) for float weights and call these for every other dtype, so a new
// dtype is a case here (dispatch/product_table.cpp), not a forward pass in each backend.
//
// Contract for every dtype listed by product_dtypes(): each (row, vector)
// result of matmat_rows equals matvec_rows' bit for bit (under the exact
// numerics policy) unless batch_runs_gemm_f32 says the batch is the f32
// GEMM's (bf16/f16 at the avx512 and avx2 levels: equal to f32 rounding) or
// bf16's batch path is amx-bf16x3 (exact terms in other sums: equal to f32
// rounding too; kernels/products/half_products.hpp), and neither depends
// on the row range, so backends split rows across threads freely. bf16 and
// f16 weights are read in place too (kernels/products/half_products.hpp): backends
// send every non-f32 matrix here.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "llama/kernels/products/half_products.hpp"
#include "llama/kernels/products/llama2c_int8.hpp"
#include "llama/numerics.hpp"
#include "llama/tensor.hpp"

namespace llama {

// What a product's input is before the kernel reads it.
enum class InputKind {
  f32,        // the activation itself
  q8_groups,  // runq.c's quantization (quantize_activations) in groups of group_size
  // llama.cpp's x86 quantization for Q8_0 products (f16-rounded scales,
  // quantize_activations_q8_0_blocks in kernels/products/gguf_products.hpp), groups of 32.
  q8_0_blocks,
  // llama.cpp's x86 quantize_row_q8_1 for Q4_1 and Q5_1 products: q8_0 blocks'
  // values, and per block two floats, d then s
  // (quantize_activations_q8_1_blocks in kernels/products/legacy_products.hpp);
  // group_size 16, the values per float of scales.
  q8_1_blocks,
  // llama.cpp's q8_K for K-quant products (quantize_activations_q8_k in
  // kernels/products/gguf_kquant.hpp), groups of 256.
  q8_k_blocks,
};

struct InputFormat {
  InputKind kind = InputKind::f32;
  int64_t group_size = 0;  // quantized kinds: values per scale
  bool quantized() const { return kind != InputKind::f32; }
  bool operator==(const InputFormat&) const = default;
};
std::string to_string(const InputFormat& f);  // "f32", "q8 groups of 64", "q8_0 blocks", ...

// The dtypes with kernels here: q8_0 and GGUF's block_q8_0, q4_0, q4_k, q6_k
// (read in place: kernels/products/gguf_products.hpp, gguf_kquant.hpp), q5_k,
// q5_0, q4_1, q5_1 (kernels/products/legacy_products.hpp). Every GGUF block type
// quantizes its input as llama.cpp does (q8_0 blocks for block_q8_0, q4_0 and
// q5_0, q8_1 blocks for q4_1 and q5_1, q8_K for q4_k, q5_k and q6_k) and takes
// llama.cpp's integer products (every kernel the same bits). bf16 and f16:
// f32 input, decode through the same block kernels, batches through
// kernels/products/half_products.hpp.
DTypeSet product_dtypes();

// What a backend built on the core's kernels runs (its supported_dtypes()): f32
// (its own engine) and every dtype of product_dtypes() (bf16 and f16 included).
inline DTypeSet core_kernel_dtypes() {
  DTypeSet s = product_dtypes();
  return s.add(DType::f32);
}

// How products with `w` read their input; throws Error naming the tensor when
// its dtype has no kernels here. The numerics policy does not change it.
InputFormat input_format(const Tensor& w);
InputFormat input_format(const Tensor& w, Numerics numerics);

// x (f32 [n]) into `values` (i8 [n]) and `scales` (f32 [n / group_size]) in
// the quantized format `f`.
void quantize_input(const InputFormat& f, std::span<const float> x, std::span<int8_t> values,
                    std::span<float> scales);

// An input vector as its product reads it: `f32` for InputKind::f32, `q8` for
// the quantized kinds (the other member may be empty).
struct ProductInput {
  std::span<const float> f32;  // f32 [cols]
  Q8View q8;                   // i8 [cols] + f32 [cols / group_size]
};
// A batch of n input vectors: f32 rows `ld` floats apart, or a quantized batch.
struct ProductBatch {
  std::span<const float> f32;  // f32 [n, ld]
  int64_t ld = 0;
  Q8BatchView q8;  // i8 [n, cols] + f32 [n, cols / group_size]
  int64_t n = 0;
  // fast: bf16 weights' batch products may round the f32 input to bf16 (then
  // not matvec_rows' bits: llama/numerics.hpp states the bound).
  Numerics numerics = Numerics::exact;
  // fast, bf16 weights on a fast path (onednn-bf16, amx-bf16): the f32
  // vectors already rounded to bf16 in that path's layout
  // (kernels/products/half_products.hpp), so the product does not round them again;
  // empty: the product rounds them itself.
  Bf16BatchView bf16{};
};

// out[r - row_begin] = row r of W . x for rows [row_begin, row_end), in the
// input's format (input_format(w)).
// `kernel`: KernelSet::portable for the plain loops (the reference backend),
// best_kernel_set() for the fastest this CPU runs; both give the same bits.
void matvec_rows(std::span<float> out, const Tensor& w, const ProductInput& x, int64_t row_begin,
                 int64_t row_end, KernelSet kernel);
// out[t * out_stride + r] for rows [row_begin, row_end) and each vector t:
// each weight row read once for the batch, each result equal to matvec_rows'
// (but see batch_runs_gemm_f32).
void matmat_rows(std::span<float> out, int64_t out_stride, const Tensor& w, const ProductBatch& x,
                 int64_t row_begin, int64_t row_end, KernelSet kernel);

// Whether matmat_rows with `w` runs the core's f32 GEMM (kernels/products/gemm_f32.hpp)
// on the weights widened exactly: bf16/f16 under exact numerics (or fast where
// the bf16 unit is not taken) at the avx512 and avx2 levels. Its results then equal matvec_rows'
// to f32 rounding, not bit for bit, and row ranges that start at multiples of
// kGemmRowUnit waste no lanes.
bool batch_runs_gemm_f32(const Tensor& w, KernelSet kernel, Numerics numerics);

// "q8_0 x q8 groups of 64, avx512-vnni kernel": what --explain says about `w`'s products.
std::string describe_products(const Tensor& w, KernelSet kernel);
// The kernel per product kind (decode, prefill) for `w` under `numerics` and
// why: "bf16 in place x f32: decode avx512-f32 (...), prefill avx512-bf16 (...)".
std::string describe_products(const Tensor& w, KernelSet kernel, Numerics numerics);

// An activation vector and its quantized form, made at most once per format
// until the vector changes (runq.c quantizes xb once for q, k and v).
// Storage is sized by reserve() at prepare; nothing is allocated per token.
class InputCache {
 public:
  void reserve(int64_t max_values);
  // New values (the span must outlive their use): forgets the quantized form.
  void set(std::span<const float> x);
  // The input for products in format `f`, quantizing on the first call.
  ProductInput get(const InputFormat& f);

 private:
  std::span<const float> x_;
  std::vector<int8_t> values_;  // i8 [max_values]
  std::vector<float> scales_;   // f32 [max_values]: at most one scale per value
  InputFormat quantized_;       // kind f32: nothing quantized since set()
};

// The same for a batch of n vectors held as f32 rows `ld` floats apart.
class BatchInputCache {
 public:
  void reserve(int64_t max_vectors, int64_t max_values);
  void set(std::span<const float> rows, int64_t ld, int64_t n, int64_t cols);
  ProductBatch get(const InputFormat& f);
  // The fast paths' input (kernels/products/half_products.hpp): storage for
  // max_vectors of max_values in `layout` (bf16_batch_layout of the products
  // that read it), and the batch rounded on the first call after set(), so
  // wq, wk and wv (w1 and w3) share one rounding. Needs the fast paths' CPU;
  // throws Error past the reserved size.
  void reserve_bf16(int64_t max_vectors, int64_t max_values, Bf16Layout layout);
  Bf16BatchView bf16();

 private:
  std::span<const float> rows_;
  int64_t ld_ = 0, n_ = 0, cols_ = 0;
  std::vector<int8_t> values_;  // i8 [max_vectors, max_values]
  std::vector<float> scales_;   // f32 [max_vectors, max_values]
  InputFormat quantized_;
  std::vector<uint16_t> rounded_;  // bf16 [max_vectors, bf16_batch_ld(max_values)] in layout_
  Bf16Layout layout_ = Bf16Layout::rows;
  bool rounded_valid_ = false;  // rounded_ holds this set()'s batch
};

}  // namespace llama
