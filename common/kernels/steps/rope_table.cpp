// RopeTable: the per-pair frequencies and their scaling, and the angles of a
// position (rope_rotate, in each step arithmetic's file, applies them). Built with
// -ffp-contract=off (common/CMakeLists.txt) so each step rounds in f32 as
// PyTorch's eager ops do in transformers' _compute_default_rope_parameters,
// _compute_linear_scaling_rope_parameters and _compute_llama3_parameters.
#include <cmath>
#include <numbers>

#include "llama/error.hpp"
#include "llama/kernels/steps/rope.hpp"

namespace llama {
namespace {

// transformers' _compute_llama3_parameters, one frequency at a time, every
// operand rounded to f32 as the torch ops on an f32 tensor do:
//   wavelen = 2 pi / inv_freq
//   wavelen > low_freq_wavelen: inv_freq / factor (long wavelengths: scaled)
//   wavelen < high_freq_wavelen: inv_freq (short wavelengths: kept)
//   otherwise smooth = (old_context / wavelen - low) / (high - low),
//             (1 - smooth) * inv_freq / factor + smooth * inv_freq
float llama3_scaled(float inv_freq, const RopeScaling& r) {
  const auto factor = static_cast<float>(r.factor);
  const auto low = static_cast<float>(r.low_freq_factor);
  const auto old_context = static_cast<float>(r.original_max_position_embeddings);
  // Python computes these two in double, then torch compares them with f32 values.
  const double context = static_cast<double>(r.original_max_position_embeddings);
  const auto low_freq_wavelen = static_cast<float>(context / r.low_freq_factor);
  const auto high_freq_wavelen = static_cast<float>(context / r.high_freq_factor);
  const float wavelen = static_cast<float>(2.0 * std::numbers::pi) / inv_freq;
  const float scaled = wavelen > low_freq_wavelen ? inv_freq / factor : inv_freq;
  if (wavelen < high_freq_wavelen || wavelen > low_freq_wavelen) return scaled;
  // (high - low) is a Python float, cast to f32 when it divides the tensor.
  const float smooth =
      (old_context / wavelen - low) / static_cast<float>(r.high_freq_factor - r.low_freq_factor);
  return (1.0f - smooth) * scaled / factor + smooth * scaled;
}

}  // namespace

RopeTable::RopeTable(const Config& c)
    : head_dim_(c.head_dim), layout_(c.rope_layout), angles_(c.rope_angles) {
  if (c.head_dim <= 0 || c.head_dim % 2 != 0) {
    throw Error("rope: head_dim " + std::to_string(c.head_dim) + " is not a positive even number");
  }
  const auto theta = static_cast<float>(c.rope_theta);
  if (angles_ == RopeAngles::ggml) {
    // llama.cpp: theta_scale = powf(freq_base, -2.0f / n_dims), freq_scale =
    // 1.0f / the linear factor; its llama3 scaling is a tensor of factors
    // (rope_freqs) no reader here produces.
    if (c.rope_scaling.type == RopeScalingType::llama3) {
      throw Error("rope: ggml's angles with llama3 scaling are not supported");
    }
    theta_scale_ = std::pow(theta, -2.0f / static_cast<float>(head_dim_));
    if (c.rope_scaling.type == RopeScalingType::linear) {
      freq_scale_ = 1.0f / static_cast<float>(c.rope_scaling.factor);
    }
  }
  inv_freq_.resize(static_cast<size_t>(pairs()));
  for (int64_t i = 0; i < pairs(); ++i) {
    // run.c: 1.0f / powf(10000.0f, head_dim / (float)head_size) with head_dim = 2i.
    float f = 1.0f / std::pow(theta, static_cast<float>(2 * i) / static_cast<float>(head_dim_));
    if (c.rope_scaling.type == RopeScalingType::linear)
      f /= static_cast<float>(c.rope_scaling.factor);
    if (c.rope_scaling.type == RopeScalingType::llama3) f = llama3_scaled(f, c.rope_scaling);
    inv_freq_[static_cast<size_t>(i)] = f;
  }
}

void RopeTable::angles(int64_t pos, std::span<float> cos_out, std::span<float> sin_out) const {
  if (angles_ == RopeAngles::ggml) {
    // ggml_rope_cache_init and rope_yarn (ggml-cpu.c) without YaRN.
    float theta = static_cast<float>(pos);
    for (int64_t i = 0; i < pairs(); ++i) {
      const float t = freq_scale_ * theta;
      cos_out[static_cast<size_t>(i)] = std::cos(t);
      sin_out[static_cast<size_t>(i)] = std::sin(t);
      theta *= theta_scale_;
    }
    return;
  }
  for (int64_t i = 0; i < pairs(); ++i) {
    const float val = static_cast<float>(pos) * inv_freq_[static_cast<size_t>(i)];
    cos_out[static_cast<size_t>(i)] = std::cos(val);
    sin_out[static_cast<size_t>(i)] = std::sin(val);
  }
}

}  // namespace llama
