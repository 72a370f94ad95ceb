// Q8_0: runq.c's quantization, the int8 kernels (portable against AVX-512
// VNNI), Q8_0 weight layouts, and parity-q8.json on every int8 backend.
#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>

#include "llama/error.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/generate.hpp"
#include "llama/kernels/dispatch/product_table.hpp"
#include "llama/kernels/products/llama2c_int8.hpp"
#include "llama/kernels/steps/run_c.hpp"
#include "llama/kernels/steps/runq_c.hpp"
#include "llama/registry.hpp"
#include "test_support.hpp"

using namespace llama;
using Catch::Matchers::Contains;

namespace {

Q8Vector quantized(const std::vector<float>& x, int64_t gs) {
  Q8Vector q;
  q.resize(static_cast<int64_t>(x.size()), gs);
  quantize_activations(x, q);
  return q;
}

// runq.c's matmul written out independently: int32 per group, then
// val = fma(ival * w_scale, x_scale, val) in group order.
std::vector<float> naive_matvec(const std::vector<int8_t>& w, const std::vector<float>& ws,
                                const Q8Vector& x, int64_t rows) {
  const auto cols = static_cast<int64_t>(x.values.size());
  const int64_t gs = x.group_size, groups = cols / gs;
  std::vector<float> out(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    float val = 0;
    for (int64_t g = 0; g < groups; ++g) {
      int64_t ival = 0;
      for (int64_t k = g * gs; k < (g + 1) * gs; ++k) {
        ival += int64_t{w[size_t(r * cols + k)]} * int64_t{x.values[size_t(k)]};
      }
      val = std::fma(float(ival) * ws[size_t(r * groups + g)], x.scales[size_t(g)], val);
    }
    out[size_t(r)] = val;
  }
  return out;
}

}  // namespace

TEST_CASE("activations are quantized as runq.c does", "[q8]") {
  // Group max 127 gives scale 1: values round half away from zero.
  const Q8Vector q = quantized({127.0f, 2.5f, -2.5f, 0.49f, 0, 0, 0, 0}, 4);
  CHECK(q.scales == std::vector<float>{127.0f / 127.0f, 0.0f});
  CHECK(q.values == std::vector<int8_t>{127, 3, -3, 0, 0, 0, 0, 0});  // an all-zero group: 0s
  const Q8Vector neg = quantized({-0.5f, 0.25f}, 2);
  CHECK(neg.scales[0] == 0.5f / 127.0f);
  CHECK(neg.values == std::vector<int8_t>{-127, 64});  // 63.5 rounds away from zero
  Q8Vector bad;
  CHECK_THROWS_WITH(bad.resize(10, 4), Contains("group size"));
  CHECK_THROWS_AS(bad.resize(8, 0), Error);
}

TEST_CASE("activation quantization matches runq.c's loop on awkward values", "[q8]") {
  // quantize_activations runs 16 values at a time where the build targets
  // AVX-512: compare it with runq.c's loop written out, on ties, values next
  // to ties, zero groups, a scale that underflows to 0, infinities and NaNs.
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> pick(0, 9);
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const int64_t gs : {1, 3, 16, 17, 64, 100}) {
    INFO("group size " << gs);
    for (int round = 0; round < 20; ++round) {
      const int64_t groups = 4;
      std::vector<float> x(static_cast<size_t>(gs * groups));
      for (int64_t g = 0; g < groups; ++g) {
        const int kind = pick(rng);
        for (int64_t i = 0; i < gs; ++i) {
          float& v = x[size_t(g * gs + i)];
          const float k = std::round(normal(rng) * 40.0f);
          switch (kind) {
            case 0:
              v = (i == 0 ? 127.0f : k + 0.5f);
              break;  // scale 1: exact ties
            case 1:
              v = (i == 0 ? -127.0f : std::nextafter(k + 0.5f, 0.0f));
              break;
            case 2:
              v = 0.0f;
              break;
            case 3:
              v = (i == 0 ? 1e-44f : normal(rng) * 1e-45f);
              break;  // scale 0
            case 4:
              v = (i == 1 % gs ? inf : normal(rng));
              break;
            case 5:
              v = (i == 2 % gs ? nan : normal(rng));
              break;
            case 6:
              v = (i == 0 ? -inf : normal(rng) * 1e30f);
              break;
            default:
              v = normal(rng) * float(kind);
              break;
          }
        }
      }
      std::vector<int8_t> want(x.size());
      std::vector<float> want_scales(static_cast<size_t>(groups));
      for (int64_t g = 0; g < groups; ++g) {
        float wmax = 0.0f;
        for (int64_t i = 0; i < gs; ++i) wmax = std::max(wmax, std::fabs(x[size_t(g * gs + i)]));
        const float scale = wmax / 127.0f;
        want_scales[size_t(g)] = scale;
        for (int64_t i = 0; i < gs; ++i) {
          const float r = std::round(x[size_t(g * gs + i)] / scale);
          want[size_t(g * gs + i)] = r != r ? 0 : int8_t(std::clamp(r, -127.0f, 127.0f));
        }
      }
      const Q8Vector q = quantized(x, gs);
      CHECK(q.values == want);
      CHECK(std::equal(q.scales.begin(), q.scales.end(), want_scales.begin(),
                       [](float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }));
    }
  }
}

TEST_CASE("weights are quantized as export.py does", "[q8]") {
  std::vector<int8_t> v(4);
  std::vector<float> s(1);
  const float err = quantize_q80(std::vector<float>{127.0f, 2.5f, -2.5f, 3.5f}, 4, v, s);
  CHECK(s[0] == 1.0f);
  CHECK(v == std::vector<int8_t>{127, 2, -2, 4});  // torch.round: half to even
  CHECK(err == 0.5f);
  const std::vector<int8_t> values = {10, -20, 30, -40};
  const std::vector<float> scales = {0.5f, 0.25f};
  std::vector<float> out(4);
  dequantize({values, scales, 2}, out);
  CHECK(out == std::vector<float>{5.0f, -10.0f, 7.5f, -10.0f});
}

TEST_CASE("portable, avx2 and VNNI int8 kernels agree bit for bit", "[q8]") {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(-128, 127);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const bool vnni = kernel_set_available(KernelSet::avx512_vnni);
  if (!vnni) WARN("this CPU has no AVX-512 VNNI: only the portable kernel is checked");
  for (const int64_t gs : {1, 3, 16, 32, 64, 100, 128, 256}) {
    INFO("group size " << gs);
    // 19 groups: 16 through the blocked VNNI path, 3 one by one; group size
    // 32 an odd 9 (dim 288), its last group without a partner in its 64 bytes.
    const int64_t rows = 37, cols = gs * (gs == 32 ? 9 : gs < 64 ? 8 : 19);
    std::vector<int8_t> w(static_cast<size_t>(rows * cols));
    for (auto& b : w) b = static_cast<int8_t>(byte(rng));  // -128 included
    std::vector<float> ws(static_cast<size_t>(rows * cols / gs));
    for (auto& s : ws) s = std::abs(normal(rng)) * 0.01f;
    std::vector<float> x(static_cast<size_t>(cols));
    for (auto& v : x) v = normal(rng);
    const Q8Vector xq = quantized(x, gs);
    const QuantizedTensor wt{w, ws, gs};
    const std::vector<float> want = naive_matvec(w, ws, xq, rows);

    std::vector<float> portable(static_cast<size_t>(rows));
    q8_matvec_rows(portable, wt, xq, 0, rows, KernelSet::portable);
    CHECK(portable == want);
    // The avx2 sets: 8 rows at a time for group sizes of whole 32-byte
    // vectors (37 rows: four blocks of 8 and 5), the portable loop otherwise.
    for (const KernelSet k : {KernelSet::avx2, KernelSet::avx_vnni}) {
      if (!kernel_set_available(k)) {
        WARN("this CPU does not run the " << to_string(k) << " kernel set: not checked");
        continue;
      }
      INFO(to_string(k));
      std::vector<float> got(static_cast<size_t>(rows));
      q8_matvec_rows(got, wt, xq, 0, rows, k);
      CHECK(got == want);
      std::vector<float> part(11);  // a range off the 8-row blocks
      q8_matvec_rows(part, wt, xq, 3, 14, k);
      CHECK(std::equal(part.begin(), part.end(), want.begin() + 3));
    }
    if (vnni) {
      std::vector<float> fast(static_cast<size_t>(rows));
      q8_matvec_rows(fast, wt, xq, 0, rows, KernelSet::avx512_vnni);
      CHECK(fast == want);
      // A batch of six vectors (four share each weight load, two go alone):
      // each (row, vector) equals the matrix-vector result.
      std::vector<Q8Vector> batch;
      for (int t = 0; t < 6; ++t) {
        std::vector<float> xt(x.size());
        for (size_t i = 0; i < x.size(); ++i)
          xt[i] = x[(i * 7 + size_t(t) * 13) % x.size()] * float(t + 1);
        batch.push_back(quantized(xt, gs));
      }
      std::vector<float> all(static_cast<size_t>(6 * rows));
      for (const KernelSet k : {KernelSet::portable, KernelSet::avx512_vnni}) {
        std::fill(all.begin(), all.end(), -1.0f);
        q8_matmat_rows(all, rows, wt, batch, 0, rows, k);
        for (size_t t = 0; t < batch.size(); ++t) {
          std::vector<float> one(static_cast<size_t>(rows));
          q8_matvec_rows(one, wt, batch[t], 0, rows, KernelSet::portable);
          CHECK(std::equal(one.begin(), one.end(), all.begin() + std::ptrdiff_t(t) * rows));
        }
      }
      // A row range writes only its rows.
      std::vector<float> part(5);
      q8_matvec_rows(part, wt, xq, 10, 15, KernelSet::avx512_vnni);
      CHECK(std::equal(part.begin(), part.end(), want.begin() + 10));
    }
  }
}

TEST_CASE("the VNNI matrix-vector kernel's row blocks agree with the portable one", "[q8]") {
  // Group sizes that are multiples of 64 (and 32) go 16 rows at a time with a
  // masked last block; rows past kMaxGroups (1024) groups take the per-row path.
  if (!kernel_set_available(KernelSet::avx512_vnni)) {
    WARN("this CPU has no AVX-512 VNNI: nothing to compare");
    return;
  }
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> byte(-128, 127);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  struct Shape {
    int64_t rows, cols, gs;
  };
  // Group size 32 goes two groups per 64 bytes: an odd count (dim 288) ends
  // on a group alone, an even one does not.
  for (const Shape shape : {Shape{53, 64 * 44, 64}, Shape{16, 192 * 5, 192}, Shape{33, 128, 128},
                            Shape{1, 64, 64}, Shape{3, 64 * 1025, 64}, Shape{53, 32 * 9, 32},
                            Shape{35, 32 * 24, 32}, Shape{17, 32, 32}}) {
    const auto [rows, cols, gs] = shape;
    INFO(rows << " x " << cols << " in groups of " << gs);
    std::vector<int8_t> w(static_cast<size_t>(rows * cols));
    for (auto& b : w) b = static_cast<int8_t>(byte(rng));
    std::vector<float> ws(static_cast<size_t>(rows * cols / gs));
    for (auto& s : ws) s = std::abs(normal(rng)) * 0.01f;
    std::vector<float> x(static_cast<size_t>(cols));
    for (auto& v : x) v = normal(rng);
    std::fill(x.begin(), x.begin() + gs, 0.0f);  // a zero group: scale 0, values 0
    const Q8Vector xq = quantized(x, gs);
    const QuantizedTensor wt{w, ws, gs};
    std::vector<float> want(static_cast<size_t>(rows));
    q8_matvec_rows(want, wt, xq, 0, rows, KernelSet::portable);
    CHECK(want == naive_matvec(w, ws, xq, rows));
    // Every range [begin, end) with begin in the first rows and end in the
    // last ones: full blocks, a tail block alone, a block plus a tail.
    for (int64_t begin = 0; begin < std::min<int64_t>(rows, 3); ++begin) {
      for (int64_t end = std::max(begin + 1, rows - 18); end <= rows; ++end) {
        INFO("rows " << begin << " .. " << end);
        // One spare float each side: the kernel writes only its rows.
        std::vector<float> fast(static_cast<size_t>(end - begin + 2), -7.0f);
        q8_matvec_rows(std::span<float>(fast).subspan(1, size_t(end - begin)), wt, xq, begin, end,
                       KernelSet::avx512_vnni);
        CHECK(fast.front() == -7.0f);
        CHECK(fast.back() == -7.0f);
        CHECK(std::equal(fast.begin() + 1, fast.end() - 1, want.begin() + begin));
      }
    }
  }
}

TEST_CASE("runq.c's attention of one head, at every level, as its loops compute it", "[q8]") {
  // The kernel runs several score chains side by side; each must still be
  // runq.c's FMA chain over the head in order (written out here one by one).
  std::mt19937 rng(21);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const int64_t hs : {8, 16, 48, 64}) {
    for (const int64_t n_pos : {1, 7, 8, 9, 16, 17, 33, 130}) {
      const int64_t stride = 2 * hs + 3;
      std::vector<float> q(static_cast<size_t>(hs)), keys(static_cast<size_t>(n_pos * stride)),
          values(keys.size());
      for (auto& v : q) v = normal(rng);
      for (auto& v : keys) v = normal(rng);
      for (auto& v : values) v = normal(rng);
      std::vector<float> p(static_cast<size_t>(n_pos)), want(static_cast<size_t>(hs), 0.0f);
      const float root = std::sqrt(float(hs));
      for (int64_t t = 0; t < n_pos; ++t) {
        float s = 0.0f;
        for (int64_t i = 0; i < hs; ++i)
          s = std::fma(q[size_t(i)], keys[size_t(t * stride + i)], s);
        p[size_t(t)] = s / root;
      }
      const float max_val = *std::max_element(p.begin(), p.end());
      float sum = 0.0f;
      for (auto& v : p) {
        v = std::exp(v - max_val);
        sum += v;
      }
      for (auto& v : p) v /= sum;
      for (int64_t t = 0; t < n_pos; ++t) {
        for (int64_t i = 0; i < hs; ++i) {
          want[size_t(i)] = std::fma(p[size_t(t)], values[size_t(t * stride + i)], want[size_t(i)]);
        }
      }
      for (const SimdLevel l : {SimdLevel::portable, SimdLevel::avx2, SimdLevel::avx512}) {
        INFO(to_string(l) << " head size " << hs << " positions " << n_pos);
        if (!simd_level_supported(l)) {
          WARN("this CPU lacks level " << to_string(l) << ": its attention kernel is not checked");
          continue;
        }
        std::vector<float> scores(static_cast<size_t>(n_pos)), got(static_cast<size_t>(hs), -1.0f);
        q8::attend_head_at_level(l, q, keys.data(), values.data(), stride, n_pos, scores, got);
        CHECK(got == want);
      }
    }
  }
}

TEST_CASE("softmax's vector expf gives std::exp's bits", "[q8]") {
  // The avx512 level runs glibc's expf algorithm in lanes; it must give
  // libm's result for every input: every 1009th float bit pattern (all
  // exponents, both signs, NaNs and infinities among them), in runs of every
  // length up to 17 so each masked tail is crossed.
  if (!q8::softmax_exp_vectorized()) {
    WARN(
        "softmax exps are std::exp per value here (no avx512, or libm's expf is not "
        "glibc's algorithm): the vector expf is not checked");
  }
#if defined(__GLIBC__)
  // glibc 2.28 through 2.36 have the algorithm the lanes repeat: there the
  // start-up check must have passed (else the vector expf is wrong).
  if (simd_level_supported(SimdLevel::avx512) && __GLIBC__ == 2 && __GLIBC_MINOR__ >= 28 &&
      __GLIBC_MINOR__ <= 36) {
    CHECK(q8::softmax_exp_vectorized());
  }
#endif
  std::vector<float> in;
  for (uint64_t u = 0; u <= 0xffffffffu; u += 1009) in.push_back(std::bit_cast<float>(uint32_t(u)));
  for (const float v :
       {0.0f, -0.0f, -87.5f, -88.0f, -103.5f, -104.0f, 88.5f, 89.0f, INFINITY, -INFINITY, NAN})
    in.push_back(v);
  for (const float shift : {0.0f, 1.5f}) {
    std::vector<float> got = in;
    size_t mismatches = 0;
    for (size_t i = 0, len = 1; i < got.size(); i += len, len = len % 17 + 1) {
      const size_t n = std::min(len, got.size() - i);
      q8::softmax_exp_at_level(SimdLevel::avx512, {got.data() + i, n}, shift);
    }
    for (size_t i = 0; i < in.size(); ++i) {
      const float want = std::exp(in[i] - shift);
      if (std::bit_cast<uint32_t>(got[i]) != std::bit_cast<uint32_t>(want) &&
          !(std::isnan(got[i]) && std::isnan(want))) {
        if (mismatches++ < 5)
          UNSCOPED_INFO("x " << in[i] << " shift " << shift << ": got " << got[i] << ", std::exp "
                             << want);
      }
    }
    CHECK(mismatches == 0);
  }
}

TEST_CASE("swiglu gives the scalar loop's bits on every level", "[q8][kernels]") {
  // On the avx512 level swiglu takes the vector expf (when it matches libm);
  // each value must still be gate * (1 / (1 + std::exp(-gate))) * up rounded
  // step by step as run.c's loop: every 1009th float bit pattern as a gate
  // (both signs, NaNs, infinities, the exp's special cases), in runs of every
  // length up to 17 so each masked tail is crossed, in place and not.
  INFO("vector expf " << (q8::softmax_exp_vectorized() ? "runs" : "does not run") << " here");
  std::vector<float> gate, up;
  std::mt19937 rng(41);
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  for (uint64_t u = 0; u <= 0xffffffffu; u += 1009) {
    gate.push_back(std::bit_cast<float>(uint32_t(u)));
    up.push_back(dist(rng));
  }
  for (const float v : {0.0f, -0.0f, -87.5f, 88.0f, 103.5f, 104.0f, -89.0f, INFINITY, -INFINITY}) {
    gate.push_back(v);
    up.push_back(dist(rng));
  }
  const auto same = [](float a, float b) {
    return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b) ||
           (std::isnan(a) && std::isnan(b));
  };
  std::vector<float> out(gate.size()), inplace = gate;
  for (size_t i = 0, len = 1; i < gate.size(); i += len, len = len % 17 + 1) {
    const size_t n = std::min(len, gate.size() - i);
    swiglu(std::span(out).subspan(i, n), std::span(gate).subspan(i, n),
           std::span(up).subspan(i, n));
    swiglu(std::span(inplace).subspan(i, n), std::span(up).subspan(i, n));
  }
  size_t mismatches = 0;
  for (size_t i = 0; i < gate.size(); ++i) {
    float v = gate[i];
    v *= 1.0f / (1.0f + std::exp(-v));
    const float want = v * up[i];
    if (!same(out[i], want) || !same(inplace[i], want)) {
      if (mismatches++ < 5)
        UNSCOPED_INFO("gate " << gate[i] << " up " << up[i] << ": got " << out[i] << " / "
                              << inplace[i] << ", loop " << want);
    }
  }
  CHECK(mismatches == 0);
  std::vector<float> short_up(3);
  CHECK_THROWS_AS(swiglu(std::span(out).first(4), std::span(gate).first(4), short_up), Error);
}

TEST_CASE("a prompt's attention in blocks of queries equals one query at a time", "[q8]") {
  // attend_queries runs up to 16 queries in the lanes of a register against
  // each key (causal: each query only up to its position); every query's
  // output must be attend_head's, bit for bit, at every level.
  std::mt19937 rng(23);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const int64_t hs : {8, 48, 64}) {
    for (const auto& [first_pos, n] :
         {std::pair<int64_t, int64_t>{0, 1}, {0, 16}, {0, 37}, {5, 3}, {30, 17}, {100, 33}}) {
      const int64_t stride = 2 * hs + 1, q_ld = 3 * hs, out_ld = hs + 5, n_keys = first_pos + n;
      std::vector<float> q(static_cast<size_t>(n * q_ld)),
          keys(static_cast<size_t>(n_keys * stride)), values(keys.size());
      for (auto& v : q) v = normal(rng);
      for (auto& v : keys) v = normal(rng);
      for (auto& v : values) v = normal(rng);
      for (const SimdLevel l : {SimdLevel::portable, SimdLevel::avx2, SimdLevel::avx512}) {
        INFO(to_string(l) << " head size " << hs << " first position " << first_pos << ", " << n
                          << " queries");
        if (!simd_level_supported(l)) {
          WARN("this CPU lacks level " << to_string(l) << ": its attention kernel is not checked");
          continue;
        }
        std::vector<float> got(static_cast<size_t>(n * out_ld), -3.0f);
        std::vector<float> scratch(q8::attend_queries_scratch(hs, n_keys));
        q8::attend_queries_at_level(l, q.data(), q_ld, n, first_pos, hs, keys.data(), values.data(),
                                    stride, scratch, got.data(), out_ld);
        for (int64_t i = 0; i < n; ++i) {
          std::vector<float> scores(static_cast<size_t>(n_keys)), want(static_cast<size_t>(hs));
          q8::attend_head_at_level(l, {q.data() + i * q_ld, size_t(hs)}, keys.data(), values.data(),
                                   stride, first_pos + i + 1, scores, want);
          INFO("query " << i);
          CHECK(std::equal(want.begin(), want.end(), got.begin() + i * out_ld));
          // The padding between output rows is left alone.
          CHECK(got[size_t(i * out_ld + hs)] == -3.0f);
        }
      }
    }
  }
}

TEST_CASE("the VNNI batch kernel (and the AMX-INT8 one) agrees with the portable one bit for bit",
          "[q8]") {
  // The batch kernel packs 16 vectors per register, runs tiles of 4 rows x 3
  // blocks of 16 and passes over 64 rows at a time: counts around each edge,
  // group sizes that are and are not multiples of 64 (and below 4 bytes or
  // not a multiple of 4, which go vector by vector), odd row ranges.
  const bool vnni = kernel_set_available(KernelSet::avx512_vnni);
  if (!vnni) WARN("this CPU has no AVX-512 VNNI: only the portable kernel is checked");
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> byte(-128, 127);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int64_t rows = 70, stride = rows + 3;  // out rows are padded: padding stays untouched
  struct Shape {
    int64_t gs, groups;
  };
  for (const Shape shape : {Shape{64, 5}, Shape{128, 2}, Shape{32, 7}, Shape{32, 8}, Shape{100, 3},
                            Shape{4, 9}, Shape{12, 5}, Shape{3, 6}, Shape{1, 8}}) {
    const int64_t gs = shape.gs, cols = gs * shape.groups;
    std::vector<int8_t> w(static_cast<size_t>(rows * cols));
    for (auto& b : w) b = static_cast<int8_t>(byte(rng));  // -128 included
    std::vector<float> ws(static_cast<size_t>(rows * shape.groups));
    for (auto& s : ws) s = std::abs(normal(rng)) * 0.01f;
    const QuantizedTensor wt{w, ws, gs};
    for (const int64_t n : {1, 3, 4, 5, 16, 17, 33, 48, 49, 50}) {
      std::vector<Q8Vector> batch;
      std::vector<int8_t> values;  // the same batch back to back, i8 [n, cols]
      std::vector<float> scales;   // f32 [n, groups]
      for (int64_t t = 0; t < n; ++t) {
        std::vector<float> x(static_cast<size_t>(cols));
        for (auto& v : x) v = normal(rng) * float(t % 5 + 1);
        if (t % 7 == 3) std::fill(x.begin(), x.begin() + gs, 0.0f);  // an all-zero group
        batch.push_back(quantized(x, gs));
        values.insert(values.end(), batch.back().values.begin(), batch.back().values.end());
        scales.insert(scales.end(), batch.back().scales.begin(), batch.back().scales.end());
      }
      const Q8BatchView view{values, scales, cols, gs};
      for (const auto& [r0, r1] :
           {std::pair<int64_t, int64_t>{0, rows}, {3, 40}, {7, 8}, {5, 69}}) {
        INFO("group size " << gs << ", cols " << cols << ", vectors " << n << ", rows [" << r0
                           << ", " << r1 << ")");
        const auto size = static_cast<size_t>(n * stride);
        std::vector<float> want(size, -1.0f);
        q8_matmat_rows(want, stride, wt, batch, r0, r1, KernelSet::portable);
        // Each (row, vector) is the matrix-vector product's, and nothing else is written.
        bool matches_matvec = true, others_untouched = true;
        for (int64_t t = 0; t < n; ++t) {
          std::vector<float> one(static_cast<size_t>(r1 - r0));
          q8_matvec_rows(one, wt, batch[size_t(t)], r0, r1, KernelSet::portable);
          for (int64_t r = 0; r < stride; ++r) {
            const float got = want[size_t(t * stride + r)];
            if (r >= r0 && r < r1) {
              matches_matvec = matches_matvec && got == one[size_t(r - r0)];
            } else {
              others_untouched = others_untouched && got == -1.0f;
            }
          }
        }
        CHECK(matches_matvec);
        CHECK(others_untouched);
        std::vector<float> got(size, -1.0f);
        q8_matmat_rows(got, stride, wt, view, r0, r1, KernelSet::portable);
        CHECK(got == want);
        // The VNNI batch kernel, and the AMX-INT8 tiles where the CPU has them.
        for (const char* kernel : {"avx512-vnni", static_cast<const char*>(nullptr)}) {
          if (!vnni) break;
          const test::ScopedEnv env("LLAMA_Q8_KERNEL", kernel);
          INFO("LLAMA_Q8_KERNEL " << (kernel != nullptr ? kernel : "unset"));
          std::fill(got.begin(), got.end(), -1.0f);
          q8_matmat_rows(got, stride, wt, batch, r0, r1, KernelSet::avx512_vnni);
          CHECK(got == want);
          std::fill(got.begin(), got.end(), -1.0f);
          q8_matmat_rows(got, stride, wt, view, r0, r1, KernelSet::avx512_vnni);
          CHECK(got == want);
        }
      }
    }
  }
}

TEST_CASE("the avx2 sets' batch kernel agrees with the portable one bit for bit", "[q8]") {
  // The avx2 sets' batch kernel packs 8 vectors per register, runs tiles of
  // 3 rows x 3 blocks of 8 and passes over 64 rows at a time: every count
  // from 1 to 20 and 37 (partial blocks; below 4 the vectors go one by one),
  // group sizes of 32 and 64, 12 and 100 (a last quad run short of 32 columns),
  // 3 (not a multiple of 4: one by one), row ranges not starting at 0 or
  // ending on a tile; and extreme values: every product 127 x 127 or
  // -128 x -127 (vpmaddubsw's pairs at their largest), all-zero groups.
  std::vector<KernelSet> sets;
  for (const KernelSet k : {KernelSet::avx2, KernelSet::avx_vnni}) {
    if (kernel_set_available(k)) {
      sets.push_back(k);
    } else {
      WARN("this CPU does not run the " << to_string(k) << " kernel set: not checked");
    }
  }
  std::mt19937 rng(17);
  std::uniform_int_distribution<int> byte(-128, 127);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int64_t rows = 70, stride = rows + 3;  // out rows are padded: padding stays untouched
  struct Shape {
    int64_t gs, groups;
    int extreme;  // 0 random; 1 all 127 x 127; 2 all -128 x -127; 3 +-127 with random signs
  };
  for (const Shape shape : {Shape{32, 7, 0}, Shape{64, 5, 0}, Shape{12, 5, 0}, Shape{100, 3, 0},
                            Shape{3, 6, 0}, Shape{32, 4, 1}, Shape{64, 3, 2}, Shape{32, 5, 3}}) {
    const int64_t gs = shape.gs, cols = gs * shape.groups;
    std::vector<int8_t> w(static_cast<size_t>(rows * cols));
    for (auto& b : w) {
      b = static_cast<int8_t>(shape.extreme == 1   ? 127
                              : shape.extreme == 2 ? -128
                              : shape.extreme == 3 ? (byte(rng) < 0 ? -127 : 127)
                                                   : byte(rng));  // -128 included
    }
    std::vector<float> ws(static_cast<size_t>(rows * shape.groups));
    for (auto& s : ws) s = std::abs(normal(rng)) * 0.01f;
    const QuantizedTensor wt{w, ws, gs};
    std::vector<int64_t> counts;
    for (int64_t n = 1; n <= 20; ++n) counts.push_back(n);
    counts.push_back(37);
    for (const int64_t n : counts) {
      std::vector<Q8Vector> batch;
      std::vector<int8_t> values;  // the same batch back to back, i8 [n, cols]
      std::vector<float> scales;   // f32 [n, groups]
      for (int64_t t = 0; t < n; ++t) {
        std::vector<float> x(static_cast<size_t>(cols));
        for (auto& v : x) {
          const float m = float(t % 5 + 1);
          v = shape.extreme == 1   ? m
              : shape.extreme == 2 ? -m
              : shape.extreme == 3 ? (normal(rng) < 0 ? -m : m)
                                   : normal(rng) * m;
        }
        if (t % 7 == 3) std::fill(x.begin(), x.begin() + gs, 0.0f);  // an all-zero group
        batch.push_back(quantized(x, gs));
        values.insert(values.end(), batch.back().values.begin(), batch.back().values.end());
        scales.insert(scales.end(), batch.back().scales.begin(), batch.back().scales.end());
      }
      if (shape.extreme != 0) {
        const int8_t want_value = shape.extreme == 2 ? -127 : 127;
        // (The first group may be the all-zero one.)
        CHECK(std::abs(int{batch.back().values.back()}) == 127);
        if (shape.extreme != 3) CHECK(batch.back().values.back() == want_value);
      }
      const Q8BatchView view{values, scales, cols, gs};
      for (const auto& [r0, r1] :
           {std::pair<int64_t, int64_t>{0, rows}, {3, 40}, {7, 8}, {5, 69}, {1, 66}, {2, 10}}) {
        const auto size = static_cast<size_t>(n * stride);
        std::vector<float> want(size, -1.0f);
        q8_matmat_rows(want, stride, wt, batch, r0, r1, KernelSet::portable);
        for (const KernelSet k : sets) {
          INFO(to_string(k) << ", group size " << gs << ", cols " << cols << ", vectors " << n
                            << ", rows [" << r0 << ", " << r1 << "), extreme " << shape.extreme);
          std::vector<float> got(size, -1.0f);
          q8_matmat_rows(got, stride, wt, batch, r0, r1, k);
          CHECK(got == want);
          std::fill(got.begin(), got.end(), -1.0f);
          q8_matmat_rows(got, stride, wt, view, r0, r1, k);
          CHECK(got == want);
        }
      }
    }
  }
}

TEST_CASE("a back-to-back Q8_0 batch must be whole vectors", "[q8]") {
  const std::vector<int8_t> w(8, 1), values(12, 1);
  const std::vector<float> ws(2, 1.0f), scales(3, 1.0f);
  const QuantizedTensor wt{w, ws, 4};
  std::vector<float> out(6);
  CHECK_NOTHROW(
      q8_matmat_rows(out, 2, wt, Q8BatchView{values, scales, 4, 4}, 0, 2, KernelSet::portable));
  CHECK(out == std::vector<float>(6, 4.0f));
  for (const Q8BatchView bad :
       {Q8BatchView{values, scales, 4, 3}, Q8BatchView{values, scales, 5, 5},
        Q8BatchView{values, std::span(scales).first(2), 4, 4}, Q8BatchView{values, scales, 0, 4},
        Q8BatchView{values, scales, 4, 0}}) {
    CHECK_THROWS_WITH(q8_matmat_rows(out, 2, wt, bad, 0, 2, KernelSet::portable),
                      Contains("Q8_0 batch") && Contains("groups of"));
  }
}

TEST_CASE("LLAMA_Q8_KERNEL=portable forces the portable kernel", "[q8]") {
  // What the CPU (and LLAMA_CPU_LEVEL, if set) picks without the override.
  const KernelSet chosen = best_kernel_set();
  CHECK((chosen == KernelSet::portable || kernel_set_available(chosen)));
  {
    const test::ScopedEnv force("LLAMA_Q8_KERNEL", "portable");
    CHECK(best_kernel_set() == KernelSet::portable);
  }
  CHECK(best_kernel_set() == chosen);
}

TEST_CASE("the avx2 sets: avx-vnni where the CPU has it, LLAMA_Q8_KERNEL=avx2 the plain bodies",
          "[q8]") {
  // The level is read once per process: ctest at LLAMA_CPU_LEVEL=avx2 checks
  // the avx2 branch on an AVX-512 VNNI CPU. The kernel override is read on
  // each call, so a suite run with it exported still checks the default.
  const KernelSet chosen = [] {
    const test::ScopedEnv unset("LLAMA_Q8_KERNEL", nullptr);
    return best_kernel_set();
  }();
  if (runs_avx2_bodies(chosen)) {
    if (kernel_set_available(KernelSet::avx_vnni)) {
      CHECK(chosen == KernelSet::avx_vnni);
    } else {
      WARN("this CPU has no AVX-VNNI: the avx2 level takes the plain avx2 set");
      CHECK(chosen == KernelSet::avx2);
    }
  } else {
    WARN(
        "the level is not avx2 (run with LLAMA_CPU_LEVEL=avx2): only the override's reach is "
        "checked");
  }
  const test::ScopedEnv force("LLAMA_Q8_KERNEL", "avx2");
  CHECK(best_kernel_set() == (runs_avx2_bodies(chosen) ? KernelSet::avx2 : chosen));
}

TEST_CASE("require_kernel_set refuses a set this CPU lacks, naming the products", "[q8]") {
  int lacking = 0;
  for (KernelSet k :
       {KernelSet::portable, KernelSet::avx2, KernelSet::avx_vnni, KernelSet::avx512_vnni}) {
    INFO(to_string(k));
    if (kernel_set_available(k)) {
      CHECK_NOTHROW(require_kernel_set(k, "q8_K products"));
    } else {
      ++lacking;
      CHECK_THROWS_WITH(require_kernel_set(k, "q8_K products"),
                        Contains("q8_K products: the ") && Contains(to_string(k)));
    }
  }
  CHECK_NOTHROW(require_kernel_set(KernelSet::portable, "any"));
  if (lacking == 0) WARN("this CPU runs every kernel set: the refusal is not exercised here");
}

TEST_CASE("the product table runs q8_0 tensors as the int8 kernels do", "[q8][products]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("q-gqa.v2.bin"));
  const Tensor& w2 = ck.model().weights.layers[1].w2;  // [dim, hidden] in groups of 64
  REQUIRE(w2.dtype == DType::q8_0);
  CHECK(product_dtypes().contains(DType::q8_0));
  const InputFormat f = input_format(w2);
  CHECK(f == InputFormat{InputKind::q8_groups, 64});
  CHECK(to_string(f) == "q8 groups of 64");
  CHECK(describe_products(w2, KernelSet::portable) == "q8_0 x q8 groups of 64, portable kernel");
  const int64_t rows = w2.rows(), cols = w2.cols();
  std::vector<float> x(size_t(3 * cols));
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * float(i)) * 4.0f;
  const QuantizedTensor q = QuantizedTensor::of(w2);
  for (const KernelSet kernel : {KernelSet::portable, best_kernel_set()}) {
    INFO(to_string(kernel));
    // One vector through an InputCache (quantized once, however many products).
    InputCache in;
    in.reserve(cols);
    in.set(std::span(x).first(size_t(cols)));
    std::vector<float> got(static_cast<size_t>(rows)), want(static_cast<size_t>(rows));
    matvec_rows(got, w2, in.get(f), 0, rows, kernel);
    Q8Vector xq;
    xq.resize(cols, 64);
    quantize_activations(std::span(x).first(size_t(cols)), xq);
    q8_matvec_rows(want, q, xq, 0, rows, kernel);
    CHECK(got == want);
    CHECK(in.get(f).q8.values.data() == in.get(f).q8.values.data());  // not requantized
    // A batch of 3 through a BatchInputCache: each row equals one vector's.
    BatchInputCache batch;
    batch.reserve(3, cols);
    batch.set(x, cols, 3, cols);
    std::vector<float> out(size_t(3 * rows));
    matmat_rows(out, rows, w2, batch.get(f), 0, rows, kernel);
    for (int64_t t = 0; t < 3; ++t) {
      quantize_activations(std::span(x).subspan(size_t(t * cols), size_t(cols)), xq);
      q8_matvec_rows(want, q, xq, 0, rows, kernel);
      CHECK(std::equal(want.begin(), want.end(), out.begin() + t * rows));
    }
  }
  const Tensor& f32_norm = ck.model().weights.final_norm;
  CHECK_THROWS_WITH(input_format(f32_norm),
                    Contains("rms_final is f32") && Contains("no product kernels"));
}

TEST_CASE("parity-q8.json on every int8 backend and both kernels", "[q8][parity]") {
  const auto cases = test::load_json(test::reference_path("parity-q8.json"));
  REQUIRE(!cases.empty());
  for (const char* backend_name : {"blas", "reference"}) {
    for (const char* kernel : {static_cast<const char*>(nullptr), "portable"}) {
      for (const int threads : {1, 2}) {
        const test::ScopedEnv force("LLAMA_Q8_KERNEL", kernel);
        for (const auto& c : cases) {
          INFO(backend_name << " kernel " << (kernel ? kernel : "best") << " threads " << threads
                            << " case " << c["name"].get<std::string>());
          const Checkpoint ck = Checkpoint::open(test::model_path(c["model"]));
          const auto r = test::generate_case(ck, c, backend_name, threads);
          CHECK(r.stream == c["stream"].get<std::vector<int32_t>>());
          CHECK(r.stopped_at_bos == c["stopped_at_bos"].get<bool>());
        }
      }
    }
  }
}

TEST_CASE("llama-cli --format json reproduces parity-q8.json", "[q8][parity][cli]") {
  for (const auto& c : test::load_json(test::reference_path("parity-q8.json"))) {
    for (const char* backend : {"blas", "reference"}) {
      INFO(backend);
      const auto r = test::run_llama_cli_case(c, {"-b", backend});
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      const auto j = nlohmann::json::parse(r.out);
      CHECK(test::json_stream(j) == c["stream"].get<std::vector<int32_t>>());
      CHECK(j["backend"] == backend);
    }
  }
}

TEST_CASE("the BLAS backend's Q8_0 prompt batch equals token-by-token forward", "[q8]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("q-gqa.v2.bin"));
  const auto vocab = static_cast<size_t>(ck.config().vocab_size);
  const std::vector<int32_t> tokens = {1, 9038, 2501, 263, 931, 17, 29871, 400};
  for (const char* kernel : {static_cast<const char*>(nullptr), "portable"}) {
    for (const int threads : {1, 2}) {
      INFO("kernel " << (kernel ? kernel : "best") << ", threads " << threads);
      const test::ScopedEnv force("LLAMA_Q8_KERNEL", kernel);
      BackendOptions o;
      o.threads = threads;
      auto a = BackendRegistry::instance().create("blas", o);
      auto b = BackendRegistry::instance().create("blas", o);
      a->prepare(ck.model());
      b->prepare(ck.model());
      // Three tokens one by one, then the rest as a batch after them.
      std::vector<std::vector<float>> want;
      for (size_t i = 0; i < tokens.size(); ++i) {
        const auto one = b->forward(tokens[i], int64_t(i));
        want.emplace_back(one.begin(), one.end());
        if (i < 3) (void)a->forward(tokens[i], int64_t(i));
      }
      const auto rest = std::span(tokens).subspan(3);
      const auto all = a->forward_batch(rest, 3, true);
      REQUIRE(all.size() == rest.size() * vocab);
      for (size_t i = 0; i < rest.size(); ++i) {
        CHECK(std::equal(want[3 + i].begin(), want[3 + i].end(), all.begin() + i * vocab));
      }
      a->prepare(ck.model());
      const auto last = a->forward_batch(tokens, 0, false);
      CHECK(std::equal(last.begin(), last.end(), want.back().begin(), want.back().end()));
    }
  }
}
