// run.c's attention for a block of queries (llama::attend_queries, a prompt)
// against attend_head one query at a time, on every level the CPU runs, and
// against the plain loops of its own arithmetic, bit for bit (the suite also
// runs capped at AVX2: scripts/test-cpu-level.sh).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "llama/kernels/dispatch/step_table.hpp"
#include "llama/kernels/steps/run_c.hpp"
#include "test_support.hpp"

using namespace llama;

TEST_CASE("run.c attention: a block of queries gives attend_head's outputs per query",
          "[kernels][attention]") {
  // The block sums each score in double in head order, attend_head in its
  // vector reduction's order: the same products, so the scores agree to the
  // last float bit but for a rare rounding of the double sums; softmax and the
  // value sums are the same operations in the same order.
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  for (int64_t hs : {16, 48, 64, 20}) {  // 20: not a multiple of 16, one query at a time
    for (int64_t first_pos : {0, 5, 37}) {
      for (int64_t n : {1, 3, 16, 17, 40}) {
        INFO("hs " << hs << ", first_pos " << first_pos << ", n " << n);
        const int64_t stride = hs * 3 + 5, n_keys = first_pos + n, q_ld = hs + 7, out_ld = hs + 2;
        std::vector<float> keys(static_cast<size_t>(n_keys * stride)), values(keys.size());
        std::vector<float> q(static_cast<size_t>(n * q_ld));
        for (auto* v : {&keys, &values, &q}) {
          for (float& f : *v) f = 2.f * d(rng);
        }
        std::vector<float> scratch(attend_scratch_floats(hs, n_keys));
        std::vector<float> got(static_cast<size_t>(n * out_ld), -7.f);
        attend_queries(q.data(), q_ld, n, first_pos, hs, keys.data(), values.data(), stride,
                       scratch, got.data(), out_ld);
        std::vector<float> scores(static_cast<size_t>(n_keys)), want(static_cast<size_t>(hs));
        for (int64_t i = 0; i < n; ++i) {
          attend_head({q.data() + i * q_ld, static_cast<size_t>(hs)}, keys.data(), values.data(),
                      stride, first_pos + i + 1, scores, want);
          for (int64_t e = 0; e < hs; ++e) {
            REQUIRE(std::abs(got[static_cast<size_t>(i * out_ld + e)] -
                             want[static_cast<size_t>(e)]) <= 1e-6f);
          }
          for (int64_t e = hs; e < out_ld; ++e)
            REQUIRE(got[static_cast<size_t>(i * out_ld + e)] == -7.f);
        }
      }
    }
  }
}

namespace {

// One query of a block, as attend_queries defines it: each score the double
// sum of the products in head order, rounded to float, divided by
// sqrt(head_size); softmax (std::max and std::exp in key order, the sum, the
// divisions); each output element an FMA chain from zero in key order.
std::vector<float> block_query_loops(const float* q, const float* keys, const float* values,
                                     int64_t stride, int64_t n_pos, int64_t hs) {
  const float scale = std::sqrt(static_cast<float>(hs));
  std::vector<float> p(static_cast<size_t>(n_pos)), out(static_cast<size_t>(hs), 0.0f);
  for (int64_t t = 0; t < n_pos; ++t) {
    double acc = 0.0;
    for (int64_t e = 0; e < hs; ++e)
      acc += static_cast<double>(q[e]) * static_cast<double>(keys[t * stride + e]);
    p[size_t(t)] = static_cast<float>(acc) / scale;
  }
  float max_val = p[0], sum = 0.0f;
  for (int64_t t = 1; t < n_pos; ++t) max_val = std::max(max_val, p[size_t(t)]);
  for (float& x : p) {
    x = std::exp(x - max_val);
    sum += x;
  }
  for (float& x : p) x /= sum;
  for (int64_t t = 0; t < n_pos; ++t) {
    for (int64_t e = 0; e < hs; ++e)
      out[size_t(e)] = std::fma(p[size_t(t)], values[t * stride + e], out[size_t(e)]);
  }
  return out;
}

// The same bits, or both NaN (which NaN an operation returns is the
// instruction's choice, not the arithmetic's).
bool same_bits(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  uint32_t x = 0, y = 0;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return x == y;
}

}  // namespace

TEST_CASE("run.c attention: attend_queries is its plain loops bit for bit",
          "[kernels][attention]") {
  // Heads that are a multiple of 16 run in blocks of 16 queries (AVX-512:
  // attend_block_avx512.cpp; else the loops of steps/run_c.cpp and
  // steps/runq_c_attention_block.cpp). Inputs with signed zeros, subnormals, huge
  // values and infinities check that a key a query does not see is skipped,
  // not multiplied by zero.
  std::mt19937 rng(29);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::uniform_int_distribution<int> pick(0, 99);
  const float inf = std::numeric_limits<float>::infinity();
  for (const bool special : {false, true}) {
    for (int64_t hs : {16, 48, 64, 80, 128, 256}) {
      for (int64_t first_pos : {0, 5, 37}) {
        for (int64_t n : {1, 3, 8, 9, 16, 17, 40}) {
          INFO("special " << special << ", hs " << hs << ", first_pos " << first_pos << ", n "
                          << n);
          const int64_t stride = hs * 2 + 16, n_keys = first_pos + n, q_ld = hs + 3,
                        out_ld = hs + 1;
          std::vector<float> keys(static_cast<size_t>(n_keys * stride)), values(keys.size());
          std::vector<float> q(static_cast<size_t>(n * q_ld));
          for (auto* v : {&keys, &values, &q}) {
            for (float& f : *v) {
              f = normal(rng);
              if (!special) continue;
              switch (pick(rng)) {
                case 0:
                  f = -0.0f;
                  break;
                case 1:
                  f = 0.0f;
                  break;
                case 2:
                  f = 1e-41f;
                  break;
                case 3:
                  f *= 1e18f;
                  break;
                case 4:
                  f = v == &values ? inf : f;
                  break;
                case 5:
                  f = v == &values ? -inf : f;
                  break;
                default:
                  break;
              }
            }
          }
          std::vector<float> scratch(attend_scratch_floats(hs, n_keys));
          std::vector<float> got(static_cast<size_t>(n * out_ld), -7.f);
          attend_queries(q.data(), q_ld, n, first_pos, hs, keys.data(), values.data(), stride,
                         scratch, got.data(), out_ld);
          int64_t mismatches = 0;
          for (int64_t i = 0; i < n; ++i) {
            const auto want = block_query_loops(q.data() + i * q_ld, keys.data(), values.data(),
                                                stride, first_pos + i + 1, hs);
            for (int64_t e = 0; e < hs; ++e) {
              if (!same_bits(got[size_t(i * out_ld + e)], want[size_t(e)])) ++mismatches;
            }
            CHECK(got[size_t(i * out_ld + hs)] == -7.f);
          }
          REQUIRE(mismatches == 0);
        }
      }
    }
  }
}
