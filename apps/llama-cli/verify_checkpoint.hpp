// llama-cli --verify-checkpoint: the format, configuration and per-tensor statistics.
#pragma once

#include <ostream>

#include "llama/formats/hf_model.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"

namespace llama::cli {

// One line per tensor: f32 tensors give min/max/mean; Q8_0 tensors give the
// scale range and the dequantized min/max/mean. Returns 0 when every value is
// finite; otherwise, after the report, throws Error naming the file, the first
// tensor with values that are not finite and how many (verify_stats.hpp).
int verify_checkpoint(const Checkpoint& ck, std::ostream& out);
// A Hugging Face checkpoint: its files, config.json as read (defaults named),
// the Config, then per tensor its HF name, dtype (F32, BF16, F16), shape and
// min/max/mean of the exactly widened values; the same return and error.
int verify_checkpoint(const HfModel& hf, std::ostream& out);

}  // namespace llama::cli
