// attend_token (a decode token's heads at once) against attend_queries (the
// same query inside a prompt block), bit for bit, for run.c's and runq.c's
// arithmetic and the f16 cache: the property batch invariance rests on (a
// token's bits do not depend on whether it is decoded or chunked with others).
#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <vector>

#include "llama/kernels/dispatch/step_table.hpp"
#include "llama/kernels/numbers/half.hpp"
#include "llama/kernels/steps/attend_token.hpp"
#include "llama/kernels/steps/f16_cache_attention.hpp"

using namespace llama;

namespace {

size_t sz(int64_t n) { return static_cast<size_t>(n); }

struct Case {
  int64_t hs, heads, kv_mul, n_keys;
  bool cancel = false;  // queries of ones, keys whose first and last elements are +-2^40
};

// Query i of a block of n (positions first .. first + n - 1), each head's
// output from attend_queries, and the same query through attend_token (heads
// split in two ranges), compared bit for bit.
template <class Block, class Token, class Element>
void check(const Case& k, const std::vector<Element>& keys, const std::vector<Element>& values,
           const Block& block, const Token& token) {
  const int64_t q_dim = k.heads * k.hs, kv_dim = k.heads / k.kv_mul * k.hs;
  std::mt19937 rng(static_cast<unsigned>(k.n_keys * 131 + k.hs));
  std::uniform_real_distribution<float> d(-2.f, 2.f);
  const int64_t n = std::min<int64_t>(k.n_keys, 21), first = k.n_keys - n;
  std::vector<float> q(sz(n * q_dim));
  for (float& f : q) f = k.cancel ? 1.f : d(rng);
  std::vector<float> want(sz(n * q_dim), -1.f), got(sz(q_dim), -1.f);
  for (int64_t h = 0; h < k.heads; ++h) {
    const int64_t kv = h / k.kv_mul * k.hs;
    block(q.data() + h * k.hs, q_dim, n, first, k.hs, keys.data() + kv, values.data() + kv, kv_dim,
          want.data() + h * k.hs, q_dim);
  }
  for (int64_t i = 0; i < n; ++i) {
    INFO("hs " << k.hs << ", heads " << k.heads << ", kv_mul " << k.kv_mul << ", query at "
               << first + i);
    const int64_t split = k.heads / 2;
    for (const auto& [h0, h1] : {std::pair<int64_t, int64_t>{0, split}, {split, k.heads}}) {
      if (h0 == h1) continue;
      token(TokenHeads{q.data() + i * q_dim, h0, h1, k.kv_mul, k.hs, got.data()}, keys.data(),
            values.data(), kv_dim, first + i + 1);
    }
    REQUIRE(std::memcmp(got.data(), want.data() + i * q_dim, sz(q_dim) * sizeof(float)) == 0);
  }
}

const Case kCases[] = {{64, 6, 1, 1},        {64, 6, 1, 16},      {64, 6, 2, 17}, {64, 4, 4, 40},
                       {16, 3, 1, 33},       {48, 4, 2, 70},      {20, 2, 1, 19}, {128, 8, 4, 100},
                       {64, 4, 1, 50, true}, {32, 2, 1, 35, true}};

}  // namespace

TEST_CASE("attend_token: each head is attend_queries's bits, f32 cache", "[kernels][attention]") {
  for (const StepArithmetic a : {StepArithmetic::run_c, StepArithmetic::runq_c}) {
    const StepKernels& steps = step_kernels(a);
    INFO(steps.name);
    for (const Case& k : kCases) {
      std::mt19937 rng(static_cast<unsigned>(k.n_keys));
      std::uniform_real_distribution<float> d(-2.f, 2.f);
      const int64_t kv_dim = k.heads / k.kv_mul * k.hs;
      std::vector<float> keys(sz(k.n_keys * kv_dim)), values(keys.size());
      for (auto* v : {&keys, &values})
        for (float& f : *v) f = d(rng);
      if (k.cancel) {
        // Each score's double sum starts at 2^40 and ends at -2^40: the small
        // terms between lose their low bits on the way, differently in
        // another order (attend_head's vector reduction), and the float
        // result shows it.
        for (int64_t i = 0; i < k.n_keys * kv_dim; i += k.hs) {
          keys[sz(i)] = 0x1p40f;
          keys[sz(i + k.hs - 1)] = -0x1p40f;
        }
      }
      std::vector<float> scratch(std::max(attend_scratch_floats(k.hs, k.n_keys),
                                          attend_token_scratch_floats(k.heads, k.n_keys)));
      const auto block = [&](const float* q, int64_t q_ld, int64_t n, int64_t first, int64_t hs,
                             const float* ks, const float* vs, int64_t stride, float* out,
                             int64_t out_ld) {
        steps.attend_queries(q, q_ld, n, first, hs, ks, vs, stride, scratch, out, out_ld);
      };
      const auto token = [&](const TokenHeads& t, const float* ks, const float* vs, int64_t stride,
                             int64_t n_pos) {
        steps.attend_token(t, ks, vs, stride, n_pos, scratch);
      };
      check(k, keys, values, block, token);
    }
  }
}

TEST_CASE("attend_token_f16: each head is attend_queries_f16's bits", "[kernels][attention]") {
  for (const Case& k : kCases) {
    if (k.hs % 16 != 0) continue;  // the f16 cache's heads are multiples of 16
    std::mt19937 rng(static_cast<unsigned>(k.n_keys));
    std::uniform_real_distribution<float> d(-2.f, 2.f);
    const int64_t kv_dim = k.heads / k.kv_mul * k.hs;
    std::vector<uint16_t> keys(sz(k.n_keys * kv_dim)), values(keys.size());
    for (auto* v : {&keys, &values})
      for (uint16_t& h : *v) h = f32_to_f16(d(rng));
    std::vector<float> scratch(attend_f16_scratch_floats(k.hs, k.n_keys, 64));
    const auto block = [&](const float* q, int64_t q_ld, int64_t n, int64_t first, int64_t hs,
                           const uint16_t* ks, const uint16_t* vs, int64_t stride, float* out,
                           int64_t out_ld) {
      attend_queries_f16(q, q_ld, n, first, hs, ks, vs, stride, scratch, out, out_ld);
    };
    const auto token = [&](const TokenHeads& t, const uint16_t* ks, const uint16_t* vs,
                           int64_t stride,
                           int64_t n_pos) { attend_token_f16(t, ks, vs, stride, n_pos, scratch); };
    check(k, keys, values, block, token);
  }
}
