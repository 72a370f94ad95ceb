// Writes a legacy (version 0) llama2.c checkpoint with seeded random weights,
// streamed in chunks so a 4 GB model never sits in memory.
#pragma once

#include <cstdint>
#include <string>

#include "llama/config.hpp"

namespace llama::bench {

// Standard deviations of the random weights. Inputs to every projection are
// RMS-normalised (unit RMS), so 1/sqrt(fan_in) keeps each output near unit
// RMS; the residual projections (wo, w2) are further scaled by 1/sqrt(2 L) so
// the residual stream stays O(1) however deep; the classifier (or shared
// embedding) gives logits of standard deviation kLogitStd: peaked enough
// that sampling is not uniform, flat enough that it is not one-hot.
struct WeightScales {
  double embedding = 0;
  double classifier = 0;
  double qkv = 0;  // wq, wk, wv
  double wo = 0;
  double w1_w3 = 0;
  double w2 = 0;
  static constexpr double kLogitStd = 2.0;
  static WeightScales for_config(const Config& config);
};

// Bytes the checkpoint of `config` takes (header, tensors, rotary tables,
// separate classifier); throws Error on overflow.
int64_t checkpoint_file_bytes(const Config& config);

// Writes the checkpoint to `path` (through `path`.partial, renamed at the
// end, so an interrupted run leaves no truncated model under the name).
// Same config and seed give the same bytes. Throws Error naming the path on
// a config the header cannot hold or on any I/O failure.
void write_random_checkpoint(const std::string& path, const Config& config, uint64_t seed);

}  // namespace llama::bench
