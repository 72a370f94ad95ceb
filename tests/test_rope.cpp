// The RoPE table: run.c's frequencies, transformers' linear and llama3
// scaling, the angles, and the two rotation layouts.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <numbers>
#include <vector>

#include "llama/config.hpp"
#include "llama/error.hpp"
#include "llama/kernels/steps/rope.hpp"
#include "llama/sampler.hpp"

using namespace llama;

namespace {

Config with_head_dim(int64_t head_dim) {
  Config c = Config::llama2c(head_dim * 2, 16, 1, 2, 2, 16, 32, true);
  c.validate("test");
  return c;
}

// run.c's line: freq = 1.0f / powf(10000.0f, head_dim / (float)head_size), head_dim = 2i.
float run_c_freq(int64_t i, int64_t head_size) {
  return 1.0f / std::pow(10000.0f, static_cast<float>(2 * i) / static_cast<float>(head_size));
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("rope table: llama2.c's frequencies are run.c's, bit for bit", "[rope]") {
  for (const int64_t hs : {8, 48, 64, 128}) {
    const RopeTable t(with_head_dim(hs));
    REQUIRE(t.pairs() == hs / 2);
    for (int64_t i = 0; i < t.pairs(); ++i) CHECK(t.inv_freq()[size_t(i)] == run_c_freq(i, hs));
  }
  CHECK_THROWS_AS(RopeTable(Config{}), Error);  // head_dim 0
}

TEST_CASE("rope table: angles are cos and sin of float(pos) * inv_freq", "[rope]") {
  const RopeTable t(with_head_dim(16));
  std::vector<float> c(8), s(8);
  for (const int64_t pos : {0, 1, 17, 255}) {
    t.angles(pos, c, s);
    for (size_t i = 0; i < 8; ++i) {
      const float angle = static_cast<float>(pos) * t.inv_freq()[i];
      CHECK(c[i] == std::cos(angle));
      CHECK(s[i] == std::sin(angle));
    }
  }
}

TEST_CASE("rope table: linear scaling divides every frequency by the factor", "[rope]") {
  Config c = with_head_dim(64);
  const RopeTable plain(c);
  c.rope_scaling.type = RopeScalingType::linear;
  c.rope_scaling.factor = 4.0;
  const RopeTable scaled(c);
  for (size_t i = 0; i < 32; ++i) CHECK(scaled.inv_freq()[i] == plain.inv_freq()[i] / 4.0f);
}

TEST_CASE("rope table: llama3 scaling as transformers' _compute_llama3_parameters", "[rope]") {
  // rand-llama3's settings (../shared/models/hf): head_dim 32, theta 500000,
  // factor 8, low 1, high 4, original context 64: wavelengths below 16 are
  // kept, above 64 divided by 8, in between interpolated.
  Config c = with_head_dim(32);
  c.rope_theta = 500000.0;
  const RopeTable plain(c);
  c.rope_scaling = {RopeScalingType::llama3, 8.0, 1.0, 4.0, 64};
  c.validate("llama3");
  const RopeTable scaled(c);
  int kept = 0, divided = 0, smoothed = 0;
  for (size_t i = 0; i < 16; ++i) {
    const double f = plain.inv_freq()[i], got = scaled.inv_freq()[i];
    const double wavelen = 2 * std::numbers::pi / f;
    if (wavelen < 16) {
      ++kept;
      CHECK(got == f);
    } else if (wavelen > 64) {
      ++divided;
      CHECK(scaled.inv_freq()[i] == plain.inv_freq()[i] / 8.0f);
    } else {
      ++smoothed;
      const double smooth = (64 / wavelen - 1) / (4 - 1);
      CHECK(got == Approx((1 - smooth) * f / 8 + smooth * f).epsilon(1e-6));
    }
  }
  // The settings reach all three regions.
  CHECK(kept > 0);
  CHECK(divided > 0);
  CHECK(smoothed > 0);
}

TEST_CASE("rope rotation: the halves layout rotates the pairs the interleaved one does", "[rope]") {
  // A vector of 3 heads in halves order, the same values interleaved: element
  // i of a head (first half) is interleaved 2i, element i + h/2 is 2i + 1.
  Config c = with_head_dim(16);
  const RopeTable interleaved(c);
  c.rope_layout = RopeLayout::halves;
  const RopeTable halves(c);
  CHECK(halves.pair(3) == std::pair<int64_t, int64_t>{3, 11});
  CHECK(interleaved.pair(3) == std::pair<int64_t, int64_t>{6, 7});
  Rng rng(5);
  std::vector<float> h(48), i(48);
  for (float& v : h) v = rng.next_f32() - 0.5f;
  const auto to_interleaved = [](const std::vector<float>& v) {
    std::vector<float> out(v.size());
    for (size_t head = 0; head < v.size(); head += 16) {
      for (size_t k = 0; k < 8; ++k) {
        out[head + 2 * k] = v[head + k];
        out[head + 2 * k + 1] = v[head + 8 + k];
      }
    }
    return out;
  };
  std::vector<float> cos_v(8), sin_v(8);
  interleaved.angles(37, cos_v, sin_v);
  for (const bool fma : {false, true}) {
    INFO((fma ? "q8::rope_rotate (runq.c)" : "rope_rotate (run.c)"));
    std::vector<float> a = h, b = to_interleaved(h);
    if (fma) {
      q8::rope_rotate(a, halves, cos_v, sin_v);
      q8::rope_rotate(b, interleaved, cos_v, sin_v);
    } else {
      rope_rotate(a, halves, cos_v, sin_v);
      rope_rotate(b, interleaved, cos_v, sin_v);
    }
    CHECK(same_bits(to_interleaved(a), b));
    CHECK_FALSE(same_bits(a, h));  // it did rotate
  }
}
