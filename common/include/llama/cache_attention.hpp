// Attention over one sequence's KvCache, whichever its dtype: the step table's
// kernels for an f32 cache (run.c's or runq.c's arithmetic), the f16 cache's
// (steps/f16_cache_attention.hpp) otherwise. The one place a backend's
// attention jobs pick between them; each query's bits are its own either way.
#pragma once

#include <cstdint>
#include <span>

#include "llama/kernels/dispatch/step_table.hpp"
#include "llama/kv_cache.hpp"

namespace llama {

// Head h of one token (decode's kernel, dispatch/step_table.hpp's attend_head):
// q and out f32 [hs], over positions [0, n_pos) of `layer`, KV head h / kv_mul.
// `scratch`: the arithmetic's scores for an f32 cache, attend_head_f16's for f16.
void attend_head_cached(const StepKernels& steps, std::span<const float> q, int64_t h,
                        int64_t kv_mul, KvCache& cache, int64_t layer, int64_t n_pos,
                        std::span<float> scratch, std::span<float> out);

// One token's query heads t.h0..t.h1 over positions [0, n_pos) of `layer`
// (steps/attend_token.hpp). `scratch`: attend_token's for an f32 cache,
// attend_f16_scratch_floats(hs, n_pos, 1) for an f16 one.
void attend_token_cached(const StepKernels& steps, const TokenHeads& t, KvCache& cache,
                         int64_t layer, int64_t n_pos, std::span<float> scratch);

// Queries [0, n) of head h at positions first_pos.. (q and out: f32 rows of
// q_ld / out_ld floats, head h's slice at h * hs), each over positions [0, its
// own + 1) of `layer`; KV head h / kv_mul (dispatch/step_table.hpp's
// attend_queries, steps/f16_cache_attention.hpp's attend_queries_f16).
struct HeadQueries {
  const float* q;
  int64_t q_ld, n, first_pos, h, kv_mul, hs;
  float* out;
  int64_t out_ld;
};
void attend_queries_cached(const StepKernels& steps, const HeadQueries& b, KvCache& cache,
                           int64_t layer, std::span<float> scratch);

}  // namespace llama
