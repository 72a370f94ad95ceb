// Private to common/kernels: the softmax and value sums of a block of up to
// q8::kAttendQueries queries in the lanes of a register (a prompt's attention).
// runq.c's (q8_attention_block.cpp) and run.c's (math.cpp) block kernels share it;
// they differ only in how they score. Defined in q8_attention_block.cpp.
#pragma once

#include <cstdint>

#include "llama/kernels/cpu_features.hpp"

namespace llama::detail {

// st: scores f32 [n_keys, 16], lane l's query using keys [0, n_pos[l]) (16
// entries; padding lanes repeat the last real one). Per lane the operations of
// one query's softmax (the max, exp and running sum in key order, then the
// division) and value sum (FMAs into each output element from zero in key
// order), so the same bits as a query alone. hs must be a multiple of 16.
// Lane l < m's output goes to out + l * out_ld. Overwrites st.
void softmax_mix_block_at_level(SimdLevel level, float* st, int64_t n_keys, const int64_t* n_pos,
                                const float* values, int64_t stride, int64_t hs, int64_t m,
                                float* out, int64_t out_ld);

}  // namespace llama::detail
