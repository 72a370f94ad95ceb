// The rotary embedding of one model, computed once from its Config and used by
// every backend: the per-pair frequencies (rope_theta, with transformers'
// linear or llama3 scaling), the angles of a position, and which two elements
// of a head each pair rotates (Config::rope_layout). No backend computes a
// frequency of its own.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "llama/config.hpp"

namespace llama {

class RopeTable {
 public:
  RopeTable() = default;
  // The frequencies of `config` (validated): inv_freq[i] = 1 / theta^(2i / head_dim)
  // in f32 as run.c and transformers compute it, then scaled (rope_scaling).
  explicit RopeTable(const Config& config);

  int64_t head_dim() const { return head_dim_; }
  int64_t pairs() const { return head_dim_ / 2; }
  RopeLayout layout() const { return layout_; }
  // f32 [head_dim / 2]: pair i of a head turns by pos * inv_freq[i] radians.
  std::span<const float> inv_freq() const { return inv_freq_; }

  // Element indices, within a head, of pair i: (2i, 2i + 1) interleaved,
  // (i, i + head_dim / 2) in halves.
  std::pair<int64_t, int64_t> pair(int64_t i) const {
    return layout_ == RopeLayout::halves ? std::pair{i, i + pairs()} : std::pair{2 * i, 2 * i + 1};
  }

  // cos_out[i], sin_out[i] of pair i's angle at `pos`, in f32: float(pos) *
  // inv_freq[i] (run.c's arithmetic), or with RopeAngles::ggml ggml's
  // repeated product (config.hpp) times 1 / the linear scaling factor; each
  // span holds head_dim / 2 floats.
  void angles(int64_t pos, std::span<float> cos_out, std::span<float> sin_out) const;

 private:
  int64_t head_dim_ = 0;
  RopeLayout layout_ = RopeLayout::interleaved;
  RopeAngles angles_ = RopeAngles::per_pair;
  float theta_scale_ = 1.0f;     // ggml: powf(rope_theta, -2 / head_dim)
  float freq_scale_ = 1.0f;      // ggml: 1 / the linear scaling factor
  std::vector<float> inv_freq_;  // f32 [head_dim / 2]
};

// Rotates every head of `vec` (length a multiple of head_dim) in place by the
// angles of RopeTable::angles, run.c's f32 arithmetic:
// a' = a cos - b sin, b' = a sin + b cos for each pair (a, b).
void rope_rotate(std::span<float> vec, const RopeTable& rope, std::span<const float> cos_v,
                 std::span<const float> sin_v);

namespace q8 {
// The same in runq.c's arithmetic as its reference build computes it:
// a' = fma(a, c, -(b s)), b' = fma(a, s, b c).
void rope_rotate(std::span<float> vec, const RopeTable& rope, std::span<const float> cos_v,
                 std::span<const float> sin_v);
}  // namespace q8

}  // namespace llama
