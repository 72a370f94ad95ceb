// Private to common/kernels: a prompt's attention for a block of up to
// q8::kAttendQueries queries of one head in the lanes of a register. runq.c's
// (runq_c_attention_block.cpp) and run.c's (run_c.cpp) attention share the
// loop over blocks, the query transpose, the blocked score loop and the block
// softmax and value sums; they differ only in how a score is summed (the
// ScoreBlock they pass) and in what heads of other sizes take.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>

#include "llama/kernels/dispatch/cpu_features.hpp"
#include "llama/kernels/steps/runq_c.hpp"
#include "llama/kernels/x86/simd_target.hpp"

namespace llama::detail {

// st: scores f32 [n_keys, 16], lane l's query using keys [0, n_pos[l]) (16
// entries; padding lanes repeat the last real one). Per lane the operations of
// one query's softmax (the max, exp and running sum in key order, then the
// division) and value sum (FMAs into each output element from zero in key
// order), so the same bits as a query alone. hs must be a multiple of 16.
// Lane l < m's output goes to out + l * out_ld. Overwrites st.
// Defined in runq_c_attention_block.cpp.
void softmax_mix_block_at_level(SimdLevel level, float* st, int64_t n_keys, const int64_t* n_pos,
                                const float* values, int64_t stride, int64_t hs, int64_t m,
                                float* out, int64_t out_ld);

// Keys scored against a whole block of queries at a time.
inline constexpr int64_t kBlockKeys = 4;

// The AVX-512 bodies (attend_block_avx512.cpp), the same bits as the loops
// below. score_query_block_double_avx512: score_query_block with run.c's
// double sums (steps/run_c.cpp's DoubleScore: each score the double sum of the
// products in head order, rounded to float, divided by scale), for heads of
// at most kMaxBlockHead elements, a multiple of 16, and a causal block (lane
// l sees keys [0, n_keys - m + l + 1)): st holds the scores of the keys each
// lane sees, 0 or a score elsewhere (never read). mix_block_avx512:
// softmax_mix_block's value sums (out[lane][e] = the FMA chain from zero over
// the keys lane sees, in key order, of p[t][lane] * values[t][e]), hs a
// multiple of 16.
inline constexpr int64_t kMaxBlockHead = 256;
void score_query_block_double_avx512(float scale, const float* q, int64_t q_ld, int64_t m,
                                     int64_t hs, const float* keys, int64_t stride, int64_t n_keys,
                                     float* st);
void mix_block_avx512(const float* st, const int64_t* n_pos, const float* values, int64_t stride,
                      int64_t hs, int64_t m, float* out, int64_t out_ld);
// softmax_mix_block's max (lane l: std::max over st[t][l] from t = 0 in key
// order, t < n_pos[l]) and division (st[t][l] /= sum[l] for t < n_pos[l]).
void block_max_avx512(const float* st, int64_t n_keys, const int64_t* n_pos, float* max_val);
void block_divide_avx512(float* st, int64_t n_keys, const int64_t* n_pos, const float* sum);

// The block's m queries (rows q + lane * q_ld, hs floats each) transposed
// into qt (f32 [hs, L]; lanes past m zero), then scored against keys
// [0, n_keys) (rows keys + t * stride) into st (f32 [n_keys, L]), kBlockKeys
// keys at a time and the rest one by one:
// score.template block<K>(qt, hs, keys + t * stride, stride, st + t * L)
// writes st[(t + j) * L + lane] for j < K (each lane's sum in head order, so
// the blocking never changes a score's bits).
template <class ScoreBlock>
LLAMA_ALWAYS_INLINE void score_query_block(const ScoreBlock& score, const float* q, int64_t q_ld,
                                           int64_t m, int64_t hs, const float* keys, int64_t stride,
                                           int64_t n_keys, float* qt, float* st) {
  constexpr int64_t L = q8::kAttendQueries;
  for (int64_t i = 0; i < hs; ++i) {
    for (int64_t lane = 0; lane < L; ++lane)
      qt[i * L + lane] = lane < m ? q[lane * q_ld + i] : 0.0f;
  }
  int64_t t = 0;
  for (; t + kBlockKeys <= n_keys; t += kBlockKeys) {
    score.template block<kBlockKeys>(qt, hs, keys + t * stride, stride, st + t * L);
  }
  for (; t < n_keys; ++t) score.template block<1>(qt, hs, keys + t * stride, stride, st + t * L);
}

// n_pos[lane] = the number of keys lane `lane` of a block of m queries sees,
// the block's first query at position first: first + lane + 1; padding lanes
// (past m) repeat the last query's (their results are never stored).
LLAMA_ALWAYS_INLINE void block_key_counts(int64_t first, int64_t m,
                                          int64_t (&n_pos)[q8::kAttendQueries]) {
  for (int64_t lane = 0; lane < q8::kAttendQueries; ++lane)
    n_pos[lane] = first + std::min(lane, m - 1) + 1;
}

// Head elements per pass of softmax_mix_block's value sums: as many
// accumulators as fit beside the probabilities in 32 registers. The block
// softmax and value sums take heads of a multiple of it.
inline constexpr int64_t kMixWidth = 16;

// attend_queries (llama/kernels/steps/runq_c.hpp) by blocks of
// q8::kAttendQueries queries: query i (row q + i * q_ld) at position
// first_pos + i sees keys [0, first_pos + i + 1) and writes out + i * out_ld.
// Attention holds one arithmetic's always-inline kernels, scale being sqrt(hs):
//   score_block(scale, q, q_ld, m, hs, keys, stride, n_keys, qt, st): the
//     block's scores divided by scale, as score_query_block;
//   mix_block(st, n_keys, n_pos, values, stride, hs, m, out, out_ld): the
//     block's softmax and value sums, as softmax_mix_block_at_level; scratch
//     has n_keys more floats past st, free.
template <class Attention>
LLAMA_ALWAYS_INLINE void attend_query_blocks(const Attention& attention, const float* q,
                                             int64_t q_ld, int64_t n, int64_t first_pos, int64_t hs,
                                             const float* keys, const float* values, int64_t stride,
                                             std::span<float> scratch, float* out, int64_t out_ld) {
  constexpr int64_t L = q8::kAttendQueries;
  const float scale = std::sqrt(static_cast<float>(hs));
  for (int64_t i0 = 0; i0 < n; i0 += L) {
    const int64_t m = std::min(L, n - i0);
    const int64_t n_keys = first_pos + i0 + m;  // the block's last query sees them all
    float* qt = scratch.data();                 // f32 [hs, L]: the block's queries
    float* st = qt + hs * L;                    // f32 [n_keys, L]: their scores
    attention.score_block(scale, q + i0 * q_ld, q_ld, m, hs, keys, stride, n_keys, qt, st);
    int64_t n_pos[L];
    block_key_counts(first_pos + i0, m, n_pos);
    attention.mix_block(st, n_keys, n_pos, values, stride, hs, m, out + i0 * out_ld, out_ld);
  }
}

}  // namespace llama::detail
