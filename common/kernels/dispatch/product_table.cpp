// The product table: one case per dtype with kernels in the core.
#include "llama/kernels/dispatch/product_table.hpp"

#include <algorithm>

#include "kernels/products/llama2c_int8_kernels.hpp"
#include "llama/error.hpp"
#include "llama/kernels/products/gguf_kquant.hpp"
#include "llama/kernels/products/gguf_products.hpp"
#include "llama/kernels/products/half_products.hpp"
#include "llama/kernels/products/legacy_products.hpp"

namespace llama {
namespace {

[[noreturn]] void no_kernels(const Tensor& w) {
  throw Error("tensor " + w.name + " is " + to_string(w.dtype) +
              ": no product kernels for it in the core (they run " + product_dtypes().to_string() +
              ")");
}

}  // namespace

std::string to_string(const InputFormat& f) {
  switch (f.kind) {
    case InputKind::q8_groups:
      return "q8 groups of " + std::to_string(f.group_size);
    case InputKind::q8_0_blocks:
      return "q8_0 blocks";
    case InputKind::q8_1_blocks:
      return "q8_1 blocks";
    case InputKind::q8_k_blocks:
      return "q8_K blocks";
    default:
      return "f32";
  }
}

DTypeSet product_dtypes() {
  return {DType::q8_0, DType::block_q8_0, DType::q4_0, DType::q4_k, DType::q6_k,
          DType::bf16, DType::f16,        DType::q4_1, DType::q5_0, DType::q5_1,
          DType::q5_k, DType::q3_k,       DType::q2_k};
}

InputFormat input_format(const Tensor& w) {
  switch (w.dtype) {
    case DType::q8_0:
      return {InputKind::q8_groups, w.group_size};
    case DType::block_q8_0:
    case DType::q4_0:
    case DType::q5_0:
      return {InputKind::q8_0_blocks, 32};
    case DType::q4_1:
    case DType::q5_1:
      return {InputKind::q8_1_blocks, kQ8_1ScaleGroup};
    case DType::q4_k:
    case DType::q5_k:
    case DType::q6_k:
    case DType::q3_k:
    case DType::q2_k:
      return {InputKind::q8_k_blocks, 256};
    case DType::bf16:
    case DType::f16:
      return {InputKind::f32, 0};
    default:
      no_kernels(w);
  }
}

InputFormat input_format(const Tensor& w, Numerics) { return input_format(w); }

void quantize_input(const InputFormat& f, std::span<const float> x, std::span<int8_t> values,
                    std::span<float> scales) {
  switch (f.kind) {
    case InputKind::q8_groups:
      quantize_activations(x, values, scales, f.group_size);
      return;
    case InputKind::q8_0_blocks:
      quantize_activations_q8_0_blocks(x, values, scales);
      return;
    case InputKind::q8_1_blocks:
      quantize_activations_q8_1_blocks(x, values, scales);
      return;
    case InputKind::q8_k_blocks:
      quantize_activations_q8_k(x, values, scales);
      return;
    case InputKind::f32:
      break;
  }
  throw Error("quantize_input: " + to_string(f) + " input");
}

void matvec_rows(std::span<float> out, const Tensor& w, const ProductInput& x, int64_t row_begin,
                 int64_t row_end, KernelSet kernel) {
  switch (w.dtype) {
    case DType::q8_0:
      q8_matvec_rows(out, QuantizedTensor::of(w), x.q8, row_begin, row_end, kernel);
      return;
    case DType::block_q8_0:
    case DType::q4_0:
      q8_0_blocks_matvec_rows(out, block_matrix(w), x.q8, row_begin, row_end, kernel);
      return;
    case DType::q5_0:
    case DType::q4_1:
    case DType::q5_1:
      legacy_blocks_matvec_rows(out, block_matrix(w), x.q8, row_begin, row_end, kernel);
      return;
    case DType::q4_k:
    case DType::q5_k:
    case DType::q6_k:
    case DType::q3_k:
    case DType::q2_k:
      kquant_q8_k_matvec_rows(out, block_matrix(w), x.q8, row_begin, row_end, kernel);
      return;
    case DType::bf16:
    case DType::f16:
      half_matvec_rows(out, block_matrix(w), x.f32, row_begin, row_end, half_decode_path(kernel));
      return;
    default:
      no_kernels(w);
  }
}

namespace {

// The quantized types, whose batch kernels rearrange (unpack or quantize) a
// panel of rows per call before any vector passes over it: a cost per row that
// a few vectors do not repay.
bool few_vectors_by_rows(DType dtype) {
  switch (dtype) {
    case DType::q8_0:
    case DType::block_q8_0:
    case DType::q4_0:
    case DType::q5_0:
    case DType::q4_1:
    case DType::q5_1:
      return true;
    default:  // the K-quants: their batch kernels take a few vectors as well
      return false;
  }
}

// A few vectors: matvec_rows per vector over row panels small enough to stay
// in L2 while every vector passes over them (one vector: the whole range), so
// each weight row still comes from memory once. matvec_rows' bits are
// matmat_rows' (the contract above). From 8 vectors on the batch kernels are
// faster (110M Q8_0 on a Zen 5, llama-bench --parallel).
constexpr int64_t kFewVectors = 4, kFewPanelBytes = int64_t{128} << 10;

void few_vectors(std::span<float> out, int64_t out_stride, const Tensor& w, const ProductBatch& x,
                 int64_t row_begin, int64_t row_end, KernelSet kernel) {
  const auto u = [](int64_t n) { return static_cast<size_t>(n); };
  const int64_t cols = w.cols();
  const auto row_bytes = std::max<int64_t>(1, static_cast<int64_t>(w.data.size()) / w.shape[0]);
  const int64_t panel =
      x.n == 1 ? row_end - row_begin : std::max<int64_t>(16, kFewPanelBytes / row_bytes);
  for (int64_t r0 = row_begin; r0 < row_end; r0 += panel) {
    const int64_t r1 = std::min(row_end, r0 + panel);
    for (int64_t t = 0; t < x.n; ++t) {
      ProductInput in;
      if (!x.f32.empty()) in.f32 = x.f32.subspan(u(t * x.ld), u(cols));
      if (!x.q8.values.empty()) {
        const int64_t groups = cols / x.q8.group_size;
        in.q8 = Q8View(x.q8.values.subspan(u(t * cols), u(cols)),
                       x.q8.scales.subspan(u(t * groups), u(groups)), x.q8.group_size);
      }
      matvec_rows(out.subspan(u(t * out_stride + r0), u(r1 - r0)), w, in, r0, r1, kernel);
    }
  }
}

}  // namespace

void matmat_rows(std::span<float> out, int64_t out_stride, const Tensor& w, const ProductBatch& x,
                 int64_t row_begin, int64_t row_end, KernelSet kernel) {
  if (x.n <= kFewVectors && few_vectors_by_rows(w.dtype)) {
    few_vectors(out, out_stride, w, x, row_begin, row_end, kernel);
    return;
  }
  switch (w.dtype) {
    case DType::q8_0:
      q8_matmat_rows(out, out_stride, QuantizedTensor::of(w), x.q8, row_begin, row_end, kernel);
      return;
    case DType::block_q8_0:
    case DType::q4_0:
      q8_0_blocks_matmat_rows(out, out_stride, block_matrix(w), x.q8, row_begin, row_end, kernel);
      return;
    case DType::q5_0:
    case DType::q4_1:
    case DType::q5_1:
      legacy_blocks_matmat_rows(out, out_stride, block_matrix(w), x.q8, row_begin, row_end, kernel);
      return;
    case DType::q4_k:
    case DType::q5_k:
    case DType::q6_k:
    case DType::q3_k:
    case DType::q2_k:
      kquant_q8_k_matmat_rows(out, out_stride, block_matrix(w), x.q8, row_begin, row_end, kernel);
      return;
    case DType::bf16:
    case DType::f16: {
      const BlockMatrix m = block_matrix(w);
      const HalfPath path = half_batch_path(m.kind, kernel, x.numerics);
      if (half_path_reads_bf16(path) && !x.bf16.values.empty()) {
        if (x.bf16.layout != bf16_layout(path)) {
          throw Error(std::string("matmat_rows: a bf16 batch in the ") + to_string(x.bf16.layout) +
                      " layout for the " + to_string(path) + " path");
        }
        half_matmat_rows(out, out_stride, m, x.bf16, row_begin, row_end);
        return;
      }
      half_matmat_rows(out, out_stride, m, x.f32, x.ld, x.n, row_begin, row_end, path);
      return;
    }
    default:
      no_kernels(w);
  }
}

bool batch_runs_gemm_f32(const Tensor& w, KernelSet kernel, Numerics numerics) {
  if (w.dtype != DType::bf16 && w.dtype != DType::f16) return false;
  const BlockKind kind = w.dtype == DType::bf16 ? BlockKind::bf16 : BlockKind::f16;
  const HalfPath path = half_batch_path(kind, kernel, numerics);
  return path == HalfPath::avx512 || path == HalfPath::avx2;
}

void InputCache::reserve(int64_t max_values) {
  values_.assign(static_cast<size_t>(max_values), 0);
  scales_.assign(static_cast<size_t>(max_values), 0.0f);
  quantized_ = {};
}

void InputCache::set(std::span<const float> x) {
  if (x.size() > values_.size()) throw Error("InputCache: more values than reserved");
  x_ = x;
  quantized_ = {};
}

ProductInput InputCache::get(const InputFormat& f) {
  if (!f.quantized()) return {x_, {}};
  const size_t n = x_.size(), groups = n / static_cast<size_t>(f.group_size);
  const std::span<int8_t> values = std::span(values_).first(n);
  const std::span<float> scales = std::span(scales_).first(groups);
  if (quantized_ != f) {
    quantize_input(f, x_, values, scales);
    quantized_ = f;
  }
  return {x_, Q8View(values, scales, f.group_size)};
}

void BatchInputCache::reserve(int64_t max_vectors, int64_t max_values) {
  const auto n = static_cast<size_t>(max_vectors) * static_cast<size_t>(max_values);
  values_.assign(n, 0);
  scales_.assign(n, 0.0f);
  quantized_ = {};
}

void BatchInputCache::set(std::span<const float> rows, int64_t ld, int64_t n, int64_t cols) {
  if (static_cast<size_t>(n) * static_cast<size_t>(cols) > values_.size()) {
    throw Error("BatchInputCache: more values than reserved");
  }
  rows_ = rows;
  ld_ = ld;
  n_ = n;
  cols_ = cols;
  quantized_ = {};
  rounded_valid_ = false;
}

void BatchInputCache::reserve_bf16(int64_t max_vectors, int64_t max_values, Bf16Layout layout) {
  rounded_.assign(static_cast<size_t>(bf16_batch_values(max_vectors, max_values, layout)), 0);
  layout_ = layout;
  rounded_valid_ = false;
}

Bf16BatchView BatchInputCache::bf16() {
  const auto values = static_cast<uint64_t>(bf16_batch_values(n_, cols_, layout_));
  if (values > rounded_.size()) throw Error("BatchInputCache: more bf16 values than reserved");
  const std::span<uint16_t> out = std::span(rounded_).first(static_cast<size_t>(values));
  if (!rounded_valid_) {
    round_batch_to_bf16(rows_, ld_, cols_, 0, n_, out, layout_);
    rounded_valid_ = true;
  }
  return {out, bf16_batch_ld(cols_), n_, layout_};
}

ProductBatch BatchInputCache::get(const InputFormat& f) {
  ProductBatch b{rows_, ld_, {}, n_};
  if (!f.quantized()) return b;
  const auto cols = static_cast<size_t>(cols_), groups = cols / static_cast<size_t>(f.group_size);
  const auto n = static_cast<size_t>(n_);
  if (quantized_ != f) {
    for (size_t t = 0; t < n; ++t) {
      quantize_input(f, rows_.subspan(t * static_cast<size_t>(ld_), cols),
                     std::span(values_).subspan(t * cols, cols),
                     std::span(scales_).subspan(t * groups, groups));
    }
    quantized_ = f;
  }
  b.q8 = {std::span<const int8_t>(values_).first(n * cols),
          std::span<const float>(scales_).first(n * groups), cols_, f.group_size};
  return b;
}

namespace {

// Where a prompt's int8 products run beyond the set's own kernels: the AMX-INT8
// tiles for llama2.c int8 (groups the tiles take), GGUF Q8_0 and Q4_0.
std::string int8_prompt_note(const Tensor& w, KernelSet kernel) {
  const bool int8 = (w.dtype == DType::q8_0 && detail::amx_int8_takes_group_size(w.group_size)) ||
                    w.dtype == DType::block_q8_0 || w.dtype == DType::q4_0;
  return int8 && kernel == KernelSet::avx512_vnni && amx_int8_enabled()
             ? ", prompts of " + std::to_string(detail::kMinTileBatch) +
                   " tokens or more on the amx-int8 tiles"
             : "";
}

}  // namespace

std::string describe_products(const Tensor& w, KernelSet kernel) {
  // The avx2 set has bodies for the integer dots against llama.cpp's q8
  // blocks only; every other product runs the portable loops under it.
  const InputKind in = input_format(w).kind;
  const bool no_avx2_body =
      in != InputKind::q8_0_blocks && in != InputKind::q8_1_blocks && in != InputKind::q8_k_blocks;
  const bool loops = runs_avx2_bodies(kernel) && no_avx2_body;
  return std::string(to_string(w.dtype)) + " x " + to_string(input_format(w)) + ", " +
         to_string(loops ? KernelSet::portable : kernel) + " kernel" + int8_prompt_note(w, kernel);
}

std::string describe_products(const Tensor& w, KernelSet kernel, Numerics numerics) {
  if (w.dtype == DType::q4_0) {
    return "q4_0 x q8_0 blocks, " + std::string(to_string(kernel)) + " kernel" +
           int8_prompt_note(w, kernel) +
           " (llama.cpp's int8 products: codes - 8 against activations quantized per block "
           "of 32, per block fma(float(dot), w_scale * x_scale))";
  }
  if (w.dtype == DType::q5_0 || w.dtype == DType::q4_1 || w.dtype == DType::q5_1) {
    return std::string(to_string(w.dtype)) + " x " + to_string(input_format(w)) + ", " +
           to_string(kernel) +
           " kernel (llama.cpp's int8 products in its AVX2 vec_dot order: 8 lanes per "
           "block, fma(float(lane), w_scale * x_scale)" +
           (w.dtype == DType::q5_0 ? ")" : ", plus the sum of w_min * x_sum)");
  }
  if (w.dtype == DType::q4_k || w.dtype == DType::q5_k || w.dtype == DType::q6_k ||
      w.dtype == DType::q3_k || w.dtype == DType::q2_k) {
    return describe_products(w, kernel) +
           " (llama.cpp's products: activations quantized to q8_K per block of 256, int32 sums "
           "per sub-block scaled in llama.cpp's order; the same under every numerics policy)";
  }
  if (w.dtype != DType::bf16 && w.dtype != DType::f16) return describe_products(w, kernel);
  const BlockKind kind = w.dtype == DType::bf16 ? BlockKind::bf16 : BlockKind::f16;
  return std::string(to_string(w.dtype)) + " read in place x f32: decode " +
         explain_half_decode_path(kernel) + ", prefill " +
         explain_half_batch_path(kind, kernel, numerics);
}

}  // namespace llama
