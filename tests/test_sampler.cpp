// Sampler: llama2.c's RNG and each sampling mode on hand-computed distributions.
#include <catch2/catch.hpp>
#include <limits>
#include <random>

#include "llama/sampler.hpp"

using namespace llama;

TEST_CASE("xorshift generator gives run.c's first values", "[sampler]") {
  Rng rng(42);
  // Computed by hand from the recurrence in shared/reference/README.md.
  CHECK(rng.next_u32() == 1456360119u);
  CHECK(rng.next_u32() == 3359763283u);
  CHECK(rng.next_u32() == 3393612768u);
  Rng f(42);
  CHECK(f.next_f32() == Approx(0.3390852212905884).epsilon(1e-7));
}

TEST_CASE("argmax takes the first of equal maxima", "[sampler]") {
  const std::vector<float> x = {0.1f, 3.0f, -1.0f, 3.0f};
  CHECK(argmax(x) == 1);
  Sampler greedy(4, 0.0f, 0.9f, 1);
  std::vector<float> logits = x;
  CHECK(greedy.sample(logits) == 1);
}

TEST_CASE("argmax gives run.c's loop's index: ties, signed zeros, NaNs, every length",
          "[sampler]") {
  // run.c's loop, which the dispatched argmax (16 lanes where the CPU has
  // AVX-512, simd level: see test_cpu_dispatch) must agree with.
  const auto plain = [](const std::vector<float>& x) {
    int32_t best = 0;
    for (size_t i = 1; i < x.size(); ++i) {
      if (x[i] > x[static_cast<size_t>(best)]) best = static_cast<int32_t>(i);
    }
    return best;
  };
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> d(-4.f, 4.f);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (size_t n : {1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 1000, 32000}) {
    for (int kind = 0; kind < 7; ++kind) {
      std::vector<float> x(n);
      for (float& v : x) v = d(rng);
      const size_t at = rng() % n, at2 = rng() % n;
      // 1: a tie; 2: zeros of both signs only; 3: a NaN, which never wins,
      // 4: ... except at index 0, where it stays; 5: +inf and a NaN; 6: all -inf.
      if (kind == 1) x[at] = x[at2] = 9.f;
      if (kind == 2) std::fill(x.begin(), x.end(), 0.f);
      if (kind == 2) x[at] = -0.f;
      if (kind == 3) x[at] = nan;
      if (kind == 4) x[0] = nan;
      if (kind == 5) x[at] = inf;
      if (kind == 5) x[at2] = nan;
      if (kind == 6) std::fill(x.begin(), x.end(), -inf);
      INFO("n = " << n << ", kind " << kind);
      CHECK(argmax(x) == plain(x));
    }
  }
}

TEST_CASE("sampling from const logits leaves them alone and picks the same token", "[sampler]") {
  std::mt19937 rng(6);
  std::uniform_real_distribution<float> d(-4.f, 4.f);
  std::vector<float> logits(1000);
  for (float& v : logits) v = d(rng);
  const std::vector<float> kept = logits;
  for (const float temperature : {0.0f, 0.8f}) {
    Sampler a(1000, temperature, 0.9f, 3), b(1000, temperature, 0.9f, 3);
    std::vector<float> scratch(1000), copy = logits;
    for (int i = 0; i < 5; ++i) {
      copy = logits;
      CHECK(a.sample(std::span<const float>(logits), scratch) == b.sample(copy));
    }
    CHECK(logits == kept);
  }
  Sampler s(1000, 0.8f, 0.9f, 3);
  std::vector<float> small(10);
  CHECK_THROWS_WITH(s.sample(std::span<const float>(logits), small),
                    Catch::Contains("scratch smaller"));
}

TEST_CASE("softmax and multinomial sampling", "[sampler]") {
  std::vector<float> x = {0.0f, std::log(3.0f)};
  softmax(x);
  CHECK(x[0] == Approx(0.25f));
  CHECK(x[1] == Approx(0.75f));
  const std::vector<float> p = {0.25f, 0.5f, 0.25f};
  CHECK(sample_multinomial(p, 0.0f) == 0);
  CHECK(sample_multinomial(p, 0.2499f) == 0);
  CHECK(sample_multinomial(p, 0.25f) == 1);
  CHECK(sample_multinomial(p, 0.7499f) == 1);
  CHECK(sample_multinomial(p, 0.75f) == 2);
  CHECK(sample_multinomial(p, 0.99999f) == 2);
}

TEST_CASE("top-p keeps the nucleus, sorted by probability", "[sampler]") {
  // p = {0.1, 0.5, 0.15, 0.25}; top_p 0.7: sorted 0.5 (1), 0.25 (3) -> cumulative 0.75 > 0.7.
  Sampler s(4, 1.0f, 0.7f, 1);
  const std::vector<float> p = {0.1f, 0.5f, 0.15f, 0.25f};
  // r = coin * 0.75: below 0.5 -> token 1, else token 3; never 0 or 2.
  CHECK(s.sample_top_p(p, 0.0f) == 1);
  CHECK(s.sample_top_p(p, 0.66f) == 1);  // r = 0.495
  CHECK(s.sample_top_p(p, 0.67f) == 3);  // r = 0.5025
  CHECK(s.sample_top_p(p, 0.999f) == 3);
  // Equal probabilities keep index order, as glibc's stable qsort does.
  Sampler t(4, 1.0f, 0.5f, 1);
  const std::vector<float> q = {0.1f, 0.3f, 0.3f, 0.3f};
  CHECK(t.sample_top_p(q, 0.0f) == 1);
  CHECK(t.sample_top_p(q, 0.9f) == 2);  // nucleus {1, 2}, r = 0.54
}

TEST_CASE("temperature sampling draws from the RNG like run.c", "[sampler]") {
  // Same seed, same coin: the multinomial pick for coin 0.339 over softmax(logits / T).
  std::vector<float> logits = {1.0f, 2.0f, 0.5f};
  Sampler s(3, 0.5f, 1.0f, 42);
  std::vector<float> probs = {2.0f, 4.0f, 1.0f};
  softmax(probs);
  const int32_t expected = sample_multinomial(probs, Rng(42).next_f32());
  CHECK(s.sample(logits) == expected);
  CHECK(logits[1] == Approx(probs[1]));  // logits now hold the probabilities
}

TEST_CASE("sampler refuses bad settings", "[sampler][bad-input]") {
  CHECK_THROWS(Sampler(0, 0.0f, 0.9f, 1));
  CHECK_THROWS(Sampler(4, -0.1f, 0.9f, 1));
  CHECK_THROWS(Sampler(4, 1.0f, 1.5f, 1));
  CHECK_THROWS(Sampler(4, 1.0f, -0.5f, 1));
  Sampler s(4, 0.0f, 0.9f, 1);
  std::vector<float> wrong(3);
  CHECK_THROWS(s.sample(wrong));
}
