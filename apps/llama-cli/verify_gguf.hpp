// llama-cli --verify-checkpoint on a GGUF file: what the file holds
// (gguf::describe) and per-tensor statistics of the dequantized values.
#pragma once

#include <ostream>

#include "llama/formats/gguf_model.hpp"

namespace llama::cli {

// One line per tensor: its GGUF type, shape and the min/max/mean of its
// values as the core dequantizes them. Returns 0 when every value is finite,
// else throws Error after the report, as verify_checkpoint does.
int verify_gguf(const gguf::GgufModel& g, std::ostream& out);

}  // namespace llama::cli
