// Private to the core: the size check every blockwise activation quantizer
// makes before writing (q8_0, q8_1 and q8_K blocks).
#pragma once

#include <cstddef>
#include <string>

#include "llama/error.hpp"

namespace llama::detail {

// Throws Error naming `what` unless n values fill `values` and `scales` holds
// one float per values_per_scale of them ("... do not match blocks of
// block_values").
inline void check_block_input_sizes(const char* what, size_t n, size_t values, size_t scales,
                                    size_t values_per_scale, size_t block_values) {
  if (n != values || n != scales * values_per_scale) {
    throw Error(std::string(what) + ": " + std::to_string(n) + " values, " +
                std::to_string(values) + " outputs and " + std::to_string(scales) +
                " scales do not match blocks of " + std::to_string(block_values));
  }
}

}  // namespace llama::detail
