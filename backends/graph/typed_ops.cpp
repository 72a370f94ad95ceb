// Typed-weight instructions on the arena. A quantized value's f32 scales sit
// at its ArenaRef offset and its i8 values at the instruction's q_values byte
// offset (plan.hpp); every row result comes from the core's matvec_rows (one
// token) or matmat_rows (a batch), so the thread count and the row blocking
// never change a bit. One token and a batch agree bit for bit but where the
// batch runs the core's f32 GEMM (batch_runs_gemm_f32: bf16/f16 weights on
// the avx512 and avx2 levels, the f32 model's prefill sums on the upcast weights); its row
// blocks are whole kGemmRowUnit multiples. A bf16 batch on a path that reads
// bf16 (fast numerics' amx-bf16 or onednn-bf16, exact's amx-bf16x3 on a CPU
// with AMX) reads its input rounded once into the arena (round_bf16, in the
// layout of its path) and runs that path one row block per thread, whole
// 32-row panels for the tile paths. A residual
// add fused into the product (Instruction::residual) is added to each
// finished result once, as the separate add did.
#include "typed_ops.hpp"

#include <algorithm>
#include <span>

#include "kernels.hpp"
#include "llama/kernels/dispatch/product_table.hpp"
#include "llama/kernels/products/bf16_batch.hpp"
#include "llama/kernels/products/gemm_f32.hpp"
#include "llama/kernels/steps/runq_c.hpp"

namespace llama::graph {
namespace {

size_t sz(int64_t n) { return static_cast<size_t>(n); }

// Below this many weights a product runs on one thread.
constexpr int64_t kParallelMinWeights = int64_t{1} << 16;

}  // namespace

void run_round_bf16(const Executor& exec, const Instruction& in, float* arena, int64_t tokens) {
  const int64_t cols = in.a.cols;
  const Bf16Layout layout = in.bf16_layout;
  const float* a = arena + in.a.offset;                            // f32 [tokens, a.ld]
  auto* out = reinterpret_cast<uint16_t*>(arena + in.out.offset);  // bf16 in `layout`
  const std::span<const float> x(a, sz((tokens - 1) * in.a.ld + cols));
  const std::span<uint16_t> rounded(out, sz(bf16_batch_values(tokens, cols, layout)));
  // Two blocks per thread of whole tokens (of whole 16-token tiles in the
  // tile layout, which are written 16 at a time); a small batch on the
  // calling thread.
  const int threads = exec.threads();
  const bool parallel = tokens * cols >= kParallelMinWeights / 4;
  const int64_t n_blocks = parallel ? std::min<int64_t>(tokens, threads * 2) : 1;
  const int64_t unit = layout == Bf16Layout::rows ? 1 : 16;
  const int64_t per = ((tokens + n_blocks - 1) / n_blocks + unit - 1) / unit * unit;
  exec.for_each(n_blocks, parallel, [&](int64_t blk) {
    const int64_t t0 = blk * per, t1 = std::min(tokens, t0 + per);
    round_batch_to_bf16(x, in.a.ld, cols, t0, t1, rounded, layout);
  });
}

void run_rmsnorm_fma(const Instruction& in, float* arena, int64_t t) {
  const size_t n = sz(in.out.cols);
  q8::rmsnorm({arena + in.out.offset + t * in.out.ld, n}, {arena + in.a.offset + t * in.a.ld, n},
              {in.w, n}, in.eps);
}

void run_quantize(const Instruction& in, float* arena, int64_t t) {
  const int64_t cols = in.out.cols, groups = cols / in.format.group_size;
  float* scales = arena + in.out.offset;                          // f32 [tokens, groups]
  auto* values = reinterpret_cast<int8_t*>(arena) + in.q_values;  // i8 [tokens, cols]
  quantize_input(in.format, {arena + in.a.offset + t * in.a.ld, sz(cols)},
                 {values + t * cols, sz(cols)}, {scales + t * groups, sz(groups)});
}

void run_matvec_typed(const Executor& exec, const Instruction& in, float* arena, int64_t tokens,
                      bool batch_plan) {
  const int64_t rows = in.w_rows, cols = in.w_cols;
  const float* a = arena + in.a.offset;
  float* out = arena + in.out.offset;
  // The input: f32 rows, or a quantized batch (scales at a, values at q_values).
  ProductBatch batch{{}, in.a.ld, {}, tokens};
  batch.numerics = in.numerics;
  if (in.bf16_input) {  // from round_bf16: no f32 rows
    const Bf16Layout layout = in.bf16_layout;
    batch.bf16 = {
        {reinterpret_cast<const uint16_t*>(a), sz(bf16_batch_values(tokens, cols, layout))},
        bf16_batch_ld(cols),
        tokens,
        layout};
  } else {
    batch.f32 = {a, sz((tokens - 1) * in.a.ld + cols)};
  }
  if (in.format.quantized()) {
    const int64_t groups = cols / in.format.group_size;
    const auto* values = reinterpret_cast<const int8_t*>(arena) + in.q_values;
    batch.q8 = {{values, sz(tokens * cols)}, {a, sz(tokens * groups)}, cols, in.format.group_size};
  }
  const int threads = exec.threads();
  // A single rounded vector stays one block: oneDNN's kernel for it depends on
  // the row count, so a split would make its bits depend on the threads.
  const bool parallel =
      rows * cols * tokens >= kParallelMinWeights && !(in.bf16_input && tokens == 1);
  const bool gemm = batch_plan && batch_runs_gemm_f32(in.tw, in.q8_kernel, in.numerics);
  // As the f32 product: a few blocks per thread, whole multiples of 8 rows
  // (of a packed panel for the GEMM).
  // A rounded batch: one block per thread (the fast paths block the rows
  // themselves; more calls only shorten each one).
  const int64_t per_thread = in.bf16_input ? 1 : 4;
  const int64_t n_blocks =
      parallel ? std::max<int64_t>(1, std::min<int64_t>(threads * per_thread, rows / 16)) : 1;
  const int64_t per = (rows + n_blocks - 1) / n_blocks;
  // amx-bf16 and amx-bf16x3 work in panels of 32 rows.
  const bool tiles = in.bf16_input && in.bf16_layout != Bf16Layout::rows;
  const int64_t unit = gemm ? kGemmRowUnit : tiles ? 32 : 8;
  const int64_t rows_per_block = (per + unit - 1) / unit * unit;
  // A batch goes through the core's batch kernel (for int8: 16 tokens in the
  // lanes of a register, rows walked 64 at a time so they stay in L2 while
  // every token passes over them, each weight row read from memory once).
  // One call per block: the kernel rearranges the batch on every call.
  const std::span<float> all(out, sz((tokens - 1) * in.out.ld + rows));
  // A fused residual (in.residual): f32 [tokens, b.ld], added once to each
  // finished result, by the GEMM's store or right after the block's call
  // while its results are in cache.
  const float* residual = in.residual ? arena + in.b.offset : nullptr;
  const auto add_residual = [&](int64_t r0, int64_t r1) {
    if (residual == nullptr) return;
    for (int64_t t = 0; t < tokens; ++t) {
      float* y = out + t * in.out.ld + r0;
      add_row(y, residual + t * in.b.ld + r0, y, r1 - r0);
    }
  };
  exec.for_each(n_blocks, parallel, [&](int64_t blk) {
    const int64_t r0 = blk * rows_per_block;
    const int64_t r1 = std::min(rows, r0 + rows_per_block);
    if (r1 <= r0) return;
    if (!batch_plan && !in.bf16_input) {
      ProductInput x{batch.f32.first(sz(cols)), {}};
      if (in.format.quantized())
        x.q8 = Q8View(batch.q8.values, batch.q8.scales, in.format.group_size);
      matvec_rows({out + r0, sz(r1 - r0)}, in.tw, x, r0, r1, in.q8_kernel);
      add_residual(r0, r1);
      return;
    }
    if (gemm) {
      const GemmWeights type = in.tw.dtype == DType::bf16 ? GemmWeights::bf16 : GemmWeights::f16;
      gemm_f32_rows(simd_level(), out, in.out.ld, type, in.tw.data.data(), a, in.a.ld, cols, tokens,
                    r0, r1, residual, in.b.ld);
      return;
    }
    matmat_rows(all, in.out.ld, in.tw, batch, r0, r1, in.q8_kernel);
    add_residual(r0, r1);
  });
}

}  // namespace llama::graph
