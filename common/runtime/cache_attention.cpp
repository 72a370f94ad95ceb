// Attention over a sequence's KvCache: the f32/f16 choice made once for every
// backend (llama/cache_attention.hpp).
#include "llama/cache_attention.hpp"

#include "llama/kernels/steps/attend_token.hpp"
#include "llama/kernels/steps/f16_cache_attention.hpp"

namespace llama {

void attend_head_cached(const StepKernels& steps, std::span<const float> q, int64_t h,
                        int64_t kv_mul, KvCache& cache, int64_t layer, int64_t n_pos,
                        std::span<float> scratch, std::span<float> out) {
  const int64_t stride = cache.kv_dim();
  const int64_t kv_off = (h / kv_mul) * static_cast<int64_t>(q.size());
  if (cache.dtype() == KvDType::f16) {
    attend_head_f16(q, cache.keys_f16(layer, 0) + kv_off, cache.values_f16(layer, 0) + kv_off,
                    stride, n_pos, scratch, out);
  } else {
    steps.attend_head(q, cache.keys_f32(layer, 0) + kv_off, cache.values_f32(layer, 0) + kv_off,
                      stride, n_pos, scratch, out);
  }
}

void attend_token_cached(const StepKernels& steps, const TokenHeads& t, KvCache& cache,
                         int64_t layer, int64_t n_pos, std::span<float> scratch) {
  const int64_t stride = cache.kv_dim();
  if (cache.dtype() == KvDType::f16) {
    attend_token_f16(t, cache.keys_f16(layer, 0), cache.values_f16(layer, 0), stride, n_pos,
                     scratch);
  } else {
    steps.attend_token(t, cache.keys_f32(layer, 0), cache.values_f32(layer, 0), stride, n_pos,
                       scratch);
  }
}

void attend_queries_cached(const StepKernels& steps, const HeadQueries& b, KvCache& cache,
                           int64_t layer, std::span<float> scratch) {
  const int64_t stride = cache.kv_dim();
  const int64_t kv_off = (b.h / b.kv_mul) * b.hs;
  const float* q = b.q + b.h * b.hs;
  float* out = b.out + b.h * b.hs;
  if (cache.dtype() == KvDType::f16) {
    attend_queries_f16(q, b.q_ld, b.n, b.first_pos, b.hs, cache.keys_f16(layer, 0) + kv_off,
                       cache.values_f16(layer, 0) + kv_off, stride, scratch, out, b.out_ld);
  } else {
    steps.attend_queries(q, b.q_ld, b.n, b.first_pos, b.hs, cache.keys_f32(layer, 0) + kv_off,
                         cache.values_f32(layer, 0) + kv_off, stride, scratch, out, b.out_ld);
  }
}

}  // namespace llama
