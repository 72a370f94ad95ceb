// The value of a --seed flag, parsed the same way by every app that takes one.
#pragma once

#include <cstdint>
#include <string>

namespace llama::cli {

// `text` as a non-negative decimal integer (0 included; what 0 means is the
// caller's). Throws UsageError naming --seed for an empty text, a sign,
// characters after the digits, or a value beyond uint64_t.
uint64_t parse_seed(const std::string& text);

}  // namespace llama::cli
