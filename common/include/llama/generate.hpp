// The generation loop with run.c's semantics: the prompt (BOS first) is
// forced, then tokens are sampled until `steps` positions or a sampled BOS.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "llama/backend.hpp"
#include "llama/sampler.hpp"
#include "llama/tokenizers/llama2c_tokenizer.hpp"

namespace llama {

struct GenerationOptions {
  std::string prompt;
  int64_t steps = 256;  // positions, prompt included; 0 or > seq_len means seq_len
};

enum class StopReason { steps, bos };
const char* to_string(StopReason reason);

struct GenerationResult {
  std::vector<int32_t> prompt_tokens;     // BOS first
  std::vector<int32_t> generated_tokens;  // sampled after the prompt, no final BOS
  StopReason stop_reason = StopReason::steps;
  std::string text;      // every printed piece, prompt included
  double prompt_ms = 0;  // forward_batch over the prompt
  int64_t prompt_positions = 0;
  double decode_ms = 0;  // forward calls after the prompt
  int64_t decode_positions = 0;

  double prompt_tok_per_s() const;
  double decode_tok_per_s() const;
};

// Called with each printable piece (run.c's safe_printf filter), prompt first.
using PieceCallback = std::function<void(std::string_view piece)>;

// `backend` must have been prepared with a model of `config`; generation
// starts at position 0.
GenerationResult generate(InferenceBackend& backend, const Config& config,
                          const Tokenizer& tokenizer, Sampler& sampler,
                          const GenerationOptions& options, const PieceCallback& on_piece = {});

}  // namespace llama
