// The f16 KV cache: the attention kernel at every SimdLevel the CPU runs
// against a scalar transcription of ggml's arithmetic (steps/f16_cache_attention.hpp) and
// against the portable level, a prompt's block of queries against one query
// at a time, f16 rounding against half.hpp, KvCache storage and sizes, the
// memory budget's count, and the choice (format default, override, describe).
#include <catch2/catch.hpp>
#include <cmath>
#include <iostream>
#include <random>
#include <vector>

#include "llama/backend.hpp"
#include "llama/error.hpp"
#include "llama/formats/gguf_model.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/kernels/numbers/half.hpp"
#include "llama/kernels/steps/f16_cache_attention.hpp"
#include "llama/kv_cache.hpp"
#include "llama/memory_budget.hpp"
#include "llama/registry.hpp"
#include "test_support.hpp"

using namespace llama;
using llama::test::runnable_levels;

namespace {

std::vector<uint16_t> random_halves(size_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<uint16_t> v(n);
  for (uint16_t& x : v) x = f32_to_f16(d(rng));
  return v;
}

std::vector<float> random_floats(size_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

float r16(float x) { return f16_to_f32(f32_to_f16(x)); }
float fma_d(float a, float b, float c) { return float(double(a) * double(b) + double(c)); }

// ggml_vec_dot_f16 (AVX-512 build), written out element by element.
float ggml_dot(const std::vector<float>& a, const std::vector<float>& b) {
  const size_t n = a.size(), np = n / 64 * 64;
  double sumf = 0.0;
  if (np > 0) {
    float acc[4][16] = {};
    for (size_t i = 0; i < np; i += 64) {
      for (size_t j = 0; j < 4; ++j) {
        for (size_t l = 0; l < 16; ++l) {
          acc[j][l] = fma_d(a[i + 16 * j + l], b[i + 16 * j + l], acc[j][l]);
        }
      }
    }
    float x[16];
    for (size_t l = 0; l < 16; ++l) x[l] = (acc[0][l] + acc[2][l]) + (acc[1][l] + acc[3][l]);
    for (size_t w = 8; w > 0; w /= 2) {
      for (size_t l = 0; l < w; ++l) x[l] += x[l + w];
    }
    sumf = x[0];
  }
  for (size_t i = np; i < n; ++i) sumf += double(a[i] * b[i]);
  return float(sumf);
}

float ggml_expf_ref(float x) {
  const float r = 0x1.8p23f, z = std::fma(x, 0x1.715476p+0f, r), n = z - r;
  const float b = std::fma(-n, 0x1.7f7d1cp-20f, std::fma(-n, 0x1.62e4p-1f, x)), u = b * b;
  const float j = std::fma(std::fma(std::fma(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u,
                                    std::fma(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)),
                           u, std::fma(0x1.ffffecp-1f, b, 1.0f));
  if (std::fabs(n) > 192) return n <= 0 ? 0.0f : INFINITY;
  return std::ldexp(j, int(n));
}

// One query over n_pos cached positions, llama.cpp's decode: n_kv = n_pos
// rounded up to 32 cells (the rest masked), softmax in 16-lane chunks.
std::vector<float> ggml_attend(const float* q, const uint16_t* keys, const uint16_t* values,
                               int64_t stride, int64_t n_pos, int64_t hs) {
  std::vector<float> qh(static_cast<size_t>(hs)), row(static_cast<size_t>(hs));
  for (int64_t i = 0; i < hs; ++i) qh[size_t(i)] = r16(q[i]);
  const int64_t n_kv = (n_pos + 31) / 32 * 32;
  std::vector<float> p(size_t(n_kv), 0.0f);
  const float scale = 1.0f / std::sqrt(float(hs));
  float max = -INFINITY;
  for (int64_t t = 0; t < n_pos; ++t) {
    for (int64_t i = 0; i < hs; ++i) row[size_t(i)] = f16_to_f32(keys[t * stride + i]);
    p[size_t(t)] = ggml_dot(qh, row) * scale;
    max = std::max(max, p[size_t(t)]);
  }
  double sum = 0.0;
  for (int64_t t0 = 0; t0 < n_kv; t0 += 16) {
    float e[16];
    for (int64_t l = 0; l < 16; ++l) {
      e[l] = t0 + l < n_pos ? ggml_expf_ref(p[size_t(t0 + l)] - max) : 0.0f;
      p[size_t(t0 + l)] = e[l];
    }
    for (int w = 8; w > 0; w /= 2) {
      for (int l = 0; l < w; ++l) e[l] += e[l + w];
    }
    sum += double(e[0]);
  }
  const auto inv = float(1.0 / sum);
  for (int64_t t = 0; t < n_pos; ++t) p[size_t(t)] = r16(p[size_t(t)] * inv);
  std::vector<float> out(static_cast<size_t>(hs));
  for (int64_t i = 0; i < hs; ++i) {
    std::vector<float> v(size_t(n_kv), 0.0f);
    for (int64_t t = 0; t < n_pos; ++t) v[size_t(t)] = f16_to_f32(values[t * stride + i]);
    out[size_t(i)] = ggml_dot(v, p);
  }
  return out;
}

}  // namespace

TEST_CASE("round_to_f16 at every level is half.hpp's round to nearest even", "[kv][cpu]") {
  auto x = random_floats(1000, 1u, 3.0f);
  for (float v : {0.0f, -0.0f, 65504.0f, 65520.0f, 1e-8f, 6e-5f, 5.96e-8f, INFINITY, -INFINITY,
                  1.0f + 1.0f / 2048.0f, 1.0f + 3.0f / 2048.0f}) {
    x.push_back(v);
  }
  std::vector<uint16_t> want(x.size()), got(x.size());
  for (size_t i = 0; i < x.size(); ++i) want[i] = f32_to_f16(x[i]);
  for (SimdLevel l : runnable_levels("round_to_f16")) {
    INFO(to_string(l));
    round_to_f16_at_level(l, x.data(), got.data(), int64_t(x.size()));
    CHECK(got == want);
  }
}

TEST_CASE("f16-cache attention: ggml's arithmetic at every level, blocks = one query at a time",
          "[kv][cpu]") {
  const auto levels = runnable_levels("attend_queries_f16");
  for (int64_t hs : {8, 16, 48, 64, 72, 128}) {
    for (int64_t n : {1, 5, 9, 40}) {
      for (int64_t first : {0, 27, 60, 100}) {
        const int64_t stride = 2 * hs + 8, n_keys = first + n;  // a GQA-like cache row
        const auto keys = random_halves(size_t(n_keys * stride), 2u, 1.0f);
        const auto values = random_halves(size_t(n_keys * stride), 3u, 1.0f);
        const auto q = random_floats(size_t(n * hs), 4u, 2.0f);
        std::vector<float> scratch(attend_f16_scratch_floats(hs, n_keys, n));
        std::vector<float> want(size_t(n * hs));
        for (int64_t i = 0; i < n; ++i) {
          const auto w =
              ggml_attend(q.data() + i * hs, keys.data(), values.data(), stride, first + i + 1, hs);
          std::copy(w.begin(), w.end(), want.begin() + i * hs);
        }
        std::vector<float> portable(size_t(n * hs));
        attend_queries_f16_at_level(SimdLevel::portable, q.data(), hs, n, first, hs, keys.data(),
                                    values.data(), stride, scratch, portable.data(), hs);
        INFO("head size " << hs << " queries " << n << " from position " << first);
        CHECK(portable == want);
        for (SimdLevel l : levels) {
          INFO(to_string(l));
          std::vector<float> got(size_t(n * hs)), one(static_cast<size_t>(hs));
          attend_queries_f16_at_level(l, q.data(), hs, n, first, hs, keys.data(), values.data(),
                                      stride, scratch, got.data(), hs);
          CHECK(got == want);
          // The last query alone (decode) gives the block's bits.
          std::vector<float> s1(attend_f16_scratch_floats(hs, n_keys, 1));
          attend_queries_f16_at_level(l, q.data() + (n - 1) * hs, hs, 1, first + n - 1, hs,
                                      keys.data(), values.data(), stride, s1, one.data(), hs);
          CHECK(std::equal(one.begin(), one.end(), got.begin() + (n - 1) * hs));
        }
      }
    }
  }
  std::vector<float> q(300), out(300), scratch(attend_f16_scratch_floats(300, 1, 1));
  std::vector<uint16_t> kv(300);
  CHECK_THROWS_AS(attend_queries_f16(q.data(), 300, 1, 0, 300, kv.data(), kv.data(), 300, scratch,
                                     out.data(), 300),
                  Error);
}

TEST_CASE("KvCache stores f16 rows rounded and counts half the bytes", "[kv]") {
  Config c;
  c.dim = 64;
  c.hidden_dim = 128;
  c.n_layers = 2;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.vocab_size = 32;
  c.seq_len = 16;
  c.head_dim = 16;
  c.context_length = 16;
  c.validate("test");
  const KvCache f32(c, KvDType::f32);
  KvCache f16(c, KvDType::f16);
  CHECK(f32.bytes() == kv_cache_bytes(c));
  CHECK(f16.bytes() == kv_cache_bytes(c, KvDType::f16));
  CHECK(2 * f16.bytes() == f32.bytes());
  CHECK(run_state_bytes(c) - run_state_bytes(c, KvDType::f16) == f16.bytes());
  const int64_t kv = c.kv_dim();
  const auto k = random_floats(size_t(3 * kv), 5u, 1.0f),
             v = random_floats(size_t(3 * kv), 6u, 1.0f);
  f16.store(1, 4, 3, k.data(), v.data(), kv);
  for (int64_t p = 0; p < 3; ++p) {
    for (int64_t i = 0; i < kv; ++i) {
      CHECK(f16.keys_f16(1, 4 + p)[i] == f32_to_f16(k[size_t(p * kv + i)]));
      CHECK(f16.values_f16(1, 4 + p)[i] == f32_to_f16(v[size_t(p * kv + i)]));
    }
  }
}

TEST_CASE("the KV cache's dtype: GGUF f16, llama2.c f32, overrides, describe", "[kv]") {
  CHECK(parse_kv_cache("f16", "--kv-cache") == KvCacheOption::f16);
  CHECK(parse_kv_cache("f32", "--kv-cache") == KvCacheOption::f32);
  CHECK(parse_kv_cache("default", "--kv-cache") == KvCacheOption::model_default);
  CHECK_THROWS_WITH(parse_kv_cache("q8_0", "--kv-cache"),
                    "--kv-cache: unknown KV cache type 'q8_0' (f32, f16 or default)");
  const gguf::GgufModel g = gguf::open_model(test::model_path("gguf/stories1M.f32.gguf"));
  CHECK(g.model.kv_cache == KvDType::f16);
  CHECK(resolve_kv_cache(KvCacheOption::model_default, g.model).dtype == KvDType::f16);
  CHECK(resolve_kv_cache(KvCacheOption::f32, g.model).dtype == KvDType::f32);
  const Checkpoint checkpoint = Checkpoint::open(test::model_path("stories1M.bin"));
  const Model& ck = checkpoint.model();
  CHECK(ck.kv_cache == KvDType::f32);
  CHECK(resolve_kv_cache(KvCacheOption::f16, ck).dtype == KvDType::f16);
  for (const char* name : {"reference", "blas", "graph"}) {
    INFO(name);
    BackendOptions o;
    auto b = BackendRegistry::instance().create(name, o);
    b->prepare(g.model);
    CHECK(b->describe().find("KV cache: f16 (the GGUF default") != std::string::npos);
    o.kv_cache = KvCacheOption::f32;
    b = BackendRegistry::instance().create(name, o);
    b->prepare(g.model);
    CHECK(b->describe().find("KV cache: f32 (asked for") != std::string::npos);
    b = BackendRegistry::instance().create(name, {});
    b->prepare(ck);
    CHECK(b->describe().find("KV cache: f32 (the format's default") != std::string::npos);
  }
}

TEST_CASE("llama-cli --kv-cache: --explain says the dtype and why; a bad value is one line",
          "[kv][cli]") {
  const std::string gguf = test::model_path("gguf/stories1M.f32.gguf");
  const auto def = test::run_llama_cli({"-c", gguf, "--explain", "-b", "graph"});
  INFO(def.err);
  REQUIRE(def.exit_code == 0);
  CHECK(def.out.find("KV cache: f16 (the GGUF default (llama.cpp's -ctk/-ctv f16))") !=
        std::string::npos);
  const auto f32 = test::run_llama_cli({"-c", gguf, "--explain", "--kv-cache", "f32"});
  REQUIRE(f32.exit_code == 0);
  CHECK(f32.out.find("KV cache: f32 (asked for (--kv-cache f32))") != std::string::npos);
  const auto bin = test::run_llama_cli({"-c", test::model_path("stories1M.bin"), "-k",
                                        test::model_path("tok2048.bin"), "--explain", "-b",
                                        "reference", "--kv-cache", "f16"});
  REQUIRE(bin.exit_code == 0);
  CHECK(bin.out.find("KV cache: f16 (asked for (--kv-cache f16))") != std::string::npos);
  const auto bad = test::run_llama_cli({"-c", gguf, "-p", "x", "--kv-cache", "q8_0"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err ==
        "llama-cli: --kv-cache: unknown KV cache type 'q8_0' (f32, f16 or default) "
        "(see --help)\n");
}
