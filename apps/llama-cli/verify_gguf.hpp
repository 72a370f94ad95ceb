// llama-cli --verify-checkpoint on a GGUF file: what the file holds
// (gguf::describe) and per-tensor statistics of the dequantized values.
#pragma once

#include <ostream>

#include "llama/formats/gguf_model.hpp"

namespace llama::cli {

// One line per tensor: its GGUF type, shape and the min/max/mean of its
// values as the core dequantizes them. Returns 1 if any value is not finite.
int verify_gguf(const gguf::GgufModel& g, std::ostream& out);

}  // namespace llama::cli
