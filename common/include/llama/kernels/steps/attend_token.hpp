// One token's attention for a range of its query heads at once (decode of a
// sequence beside others): the cache rows are walked in position order for
// all heads together, so they stream from memory front to back, where a head
// at a time reads a short slice of every row (a strided walk the prefetchers
// follow badly once many sequences' caches are out of cache).
//
// Each head's result is the bits of the arithmetic's attend_queries (a prompt
// block) for that query: so a token gets the same bits whether it is decoded
// alone or scored inside a prompt chunk, which batch invariance rests on.
#pragma once

#include <cstdint>
#include <span>

#include "llama/kernels/dispatch/cpu_features.hpp"

namespace llama {

// Query heads [h0, h1) of one token: head h's query at q + h * hs and output
// at out + h * hs (f32 [n_heads, hs]); it attends KV head h / kv_mul, whose
// keys/values for position t sit at keys/values + t * stride + (h / kv_mul) *
// hs, positions [0, n_pos). `scratch` needs attend_token_scratch_floats(h1 -
// h0, n_pos) floats.
struct TokenHeads {
  const float* q;
  int64_t h0, h1, kv_mul, hs;
  float* out;
};
size_t attend_token_scratch_floats(int64_t heads, int64_t n_pos);
// Query heads per attend_token call for `tokens` lone tokens of a batch on
// `threads` threads: the fewest calls that still give every thread two, each
// call's scores within `scratch_floats` for up to `max_pos` positions.
int64_t attend_token_group(int64_t heads, int64_t tokens, int64_t threads, int64_t scratch_floats,
                           int64_t max_pos);

// run.c's arithmetic: attend_queries's bits (steps/run_c.hpp: the scores' double
// sums in head order, then attend_head's softmax and value sums).
void attend_token(const TokenHeads& t, const float* keys, const float* values, int64_t stride,
                  int64_t n_pos, std::span<float> scratch);
// The same compiled for `level` (the best below it where the CPU lacks it).
void attend_token_at_level(SimdLevel level, const TokenHeads& t, const float* keys,
                           const float* values, int64_t stride, int64_t n_pos,
                           std::span<float> scratch);

// The f16 cache's (steps/f16_cache_attention.hpp): attend_head_f16 per head,
// whose bits attend_queries_f16 gives each query. `scratch` needs
// attend_f16_scratch_floats(hs, n_pos, 1) floats.
void attend_token_f16(const TokenHeads& t, const uint16_t* keys, const uint16_t* values,
                      int64_t stride, int64_t n_pos, std::span<float> scratch);

namespace q8 {
// runq.c's arithmetic: its attend_head per head (whose bits its attend_queries
// gives each query).
void attend_token(const TokenHeads& t, const float* keys, const float* values, int64_t stride,
                  int64_t n_pos, std::span<float> scratch);
}  // namespace q8

}  // namespace llama
