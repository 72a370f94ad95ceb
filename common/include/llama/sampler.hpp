// llama2.c's sampler: xorshift RNG, argmax, multinomial and top-p sampling,
// reproducing run.c's draws for a given seed.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "llama/kernels/steps/softmax_argmax.hpp"

namespace llama {

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint32_t next_u32() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return static_cast<uint32_t>((state_ * 0x2545F4914F6CDD1Dull) >> 32);
  }
  float next_f32() { return static_cast<float>(next_u32() >> 8) / 16777216.0f; }  // [0, 1)

 private:
  uint64_t state_;
};

// Index drawn from probabilities `p` with coin in [0, 1).
int32_t sample_multinomial(std::span<const float> p, float coin);

class Sampler {
 public:
  Sampler(int64_t vocab_size, float temperature, float top_p, uint64_t seed);

  // Picks the next token. `logits` (vocab_size values) is overwritten with the
  // probabilities, as in run.c.
  int32_t sample(std::span<float> logits);
  // The same pick with `logits` left alone: greedy takes the argmax in place,
  // sampling copies them into `scratch` (at least vocab_size floats) first.
  int32_t sample(std::span<const float> logits, std::span<float> scratch);
  // Top-p (nucleus) sampling from probabilities `p`.
  int32_t sample_top_p(std::span<const float> p, float coin);

  float temperature() const { return temperature_; }
  float top_p() const { return top_p_; }

 private:
  void check_size(size_t n) const;  // throws Error unless n == vocab_size

  struct ProbIndex {
    float prob;
    int32_t index;
  };
  int64_t vocab_size_;
  float temperature_;
  float top_p_;
  Rng rng_;
  std::vector<ProbIndex> candidates_;  // top-p scratch, [vocab_size]
};

}  // namespace llama
