// parse_seed: --seed for llama-cli, llama-compare and llama-mkmodel.
#include "seed_flag.hpp"

#include <stdexcept>

#include "usage_error.hpp"

namespace llama::cli {

// Parsed by hand: lexical_cast would wrap "-5" into a huge unsigned value.
uint64_t parse_seed(const std::string& text) {
  size_t used = 0;
  uint64_t value = 0;
  try {
    if (text.empty() || text[0] == '-' || text[0] == '+') throw std::invalid_argument(text);
    value = std::stoull(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) {
    throw UsageError("--seed: must be a non-negative integer, got '" + text + "'");
  }
  return value;
}

}  // namespace llama::cli
