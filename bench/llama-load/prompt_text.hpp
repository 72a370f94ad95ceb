// The prompt llama-load sends for --prompt-tokens N: N words from a fixed list, the
// same text on every run and machine.
#pragma once

#include <cstdint>
#include <string>

namespace llama::load {

// N short, common English words (each one token in the Llama, TinyStories and
// llama.cpp vocabularies tried; a few tokenizers split some), separated by spaces:
// about N prompt tokens plus the server's BOS.
std::string prompt_of_tokens(int64_t n);

// The same text with its first 4 words (n >= 4) naming `variant` (mod 65536) in base 16
// from a second list: prompts of different variants share no prefix beyond BOS, so no
// server answers one from another's cached prefix, and each has the same length as
// prompt_of_tokens(n) give or take a split word.
std::string prompt_of_tokens(int64_t n, uint64_t variant);

// Words prompt_of_tokens(n, variant) needs at least.
inline constexpr int64_t kVariantWords = 4;

}  // namespace llama::load
