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

}  // namespace llama::load
