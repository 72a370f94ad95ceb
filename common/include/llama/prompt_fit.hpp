// A prompt against the context: refused with both lengths when it does not
// fit, or cut to the part the caller asks to keep.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace llama {

// What to do with a prompt longer than the context.
enum class PromptTruncation {
  refuse,  // an Error giving both lengths
  left,    // keep the beginning (the left part)
  right,   // keep the end (the right part), after the prompt's first token when it is BOS
};
const char* to_string(PromptTruncation t);
// "left" / "right" / "refuse"; throws Error otherwise.
PromptTruncation parse_prompt_truncation(const std::string& s);

// Cuts `tokens` in place when longer than `context` positions, leaving
// `reserve` positions to generate into (kept = context - reserve, at least 1);
// returns the number of tokens dropped (0 when it fits). `bos`: the BOS id
// that stays first when keeping the end (-1: none).
int64_t fit_prompt(std::vector<int32_t>& tokens, int64_t context, int64_t reserve,
                   PromptTruncation truncation, int32_t bos);

}  // namespace llama
