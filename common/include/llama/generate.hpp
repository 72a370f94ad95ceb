// The generation loop with run.c's semantics: the prompt (with the tokenizer's
// own special tokens, so BOS first for llama2.c) is forced, then tokens are
// sampled until `steps` positions or a sampled BOS.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "llama/backend.hpp"
#include "llama/sampler.hpp"
#include "llama/tokenizers/tokenizer.hpp"

namespace llama {

struct GenerationOptions {
  std::string prompt;
  int64_t steps = 256;        // positions, prompt included; 0 or > seq_len means seq_len
  bool parse_special = true;  // EncodeOptions::parse_special for the prompt
};

enum class StopReason { steps, bos };
const char* to_string(StopReason reason);

struct GenerationResult {
  std::vector<int32_t> prompt_tokens;     // as encoded (BOS first where the tokenizer adds it)
  std::vector<int32_t> generated_tokens;  // sampled after the prompt, no final BOS
  StopReason stop_reason = StopReason::steps;
  std::string text;      // every printed piece (the tokenizer's stream()), prompt included
  double prompt_ms = 0;  // forward_batch over the prompt
  int64_t prompt_positions = 0;
  double decode_ms = 0;  // forward calls after the prompt
  int64_t decode_positions = 0;

  double prompt_tok_per_s() const;
  double decode_tok_per_s() const;
};

// Called with each piece of text the tokenizer's stream() gives (llama2.c:
// run.c's safe_printf filter; tokenizer.json: whole UTF-8 characters), prompt first.
using PieceCallback = std::function<void(std::string_view piece)>;

// `backend` must have been prepared with a model of `config`; generation
// starts at position 0.
GenerationResult generate(InferenceBackend& backend, const Config& config,
                          const Tokenizer& tokenizer, Sampler& sampler,
                          const GenerationOptions& options, const PieceCallback& on_piece = {});

}  // namespace llama
