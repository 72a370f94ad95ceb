// run.c's attention for a block of queries (llama::attend_queries, a prompt)
// against attend_head one query at a time, on every level the CPU runs.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "llama/kernels/math.hpp"
#include "llama/kernels/steps.hpp"
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
