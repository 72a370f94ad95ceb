// The generation loop: the prompt through forward_batch, then one forward per token.
#include "llama/generate.hpp"

#include <algorithm>
#include <chrono>

#include "llama/error.hpp"

namespace llama {
namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

const char* to_string(StopReason reason) { return reason == StopReason::bos ? "bos" : "steps"; }

double GenerationResult::prompt_tok_per_s() const {
  return prompt_ms > 0 ? static_cast<double>(prompt_positions) * 1000.0 / prompt_ms : 0.0;
}

double GenerationResult::decode_tok_per_s() const {
  return decode_ms > 0 ? static_cast<double>(decode_positions) * 1000.0 / decode_ms : 0.0;
}

GenerationResult generate(InferenceBackend& backend, const Config& config,
                          const Tokenizer& tokenizer, Sampler& sampler,
                          const GenerationOptions& options, const PieceCallback& on_piece) {
  if (options.steps < 0) throw Error("steps must be >= 0, got " + std::to_string(options.steps));
  // A model's embedding may have rows no token uses (padded vocabularies);
  // a token it cannot embed is an error.
  if (tokenizer.vocab_size() > config.vocab_size) {
    throw Error("tokenizer has " + std::to_string(tokenizer.vocab_size()) +
                " entries, more than the model's vocab_size " + std::to_string(config.vocab_size));
  }
  const int64_t steps =
      (options.steps == 0 || options.steps > config.seq_len) ? config.seq_len : options.steps;

  GenerationResult result;
  const int32_t bos = tokenizer.special().bos;
  result.prompt_tokens = tokenizer.encode(
      options.prompt, {.add_special = true, .parse_special = options.parse_special});
  // A tokenizer that adds no BOS (Llama 3's tokenizer.json) and an empty
  // prompt: the model still needs a first token.
  if (result.prompt_tokens.empty()) {
    if (bos < 0)
      throw Error("the prompt is empty and the tokenizer has no BOS token to start with");
    result.prompt_tokens.push_back(bos);
  }
  const auto& prompt = result.prompt_tokens;
  const auto n_prompt = static_cast<int64_t>(prompt.size());

  const std::unique_ptr<TextStream> stream = tokenizer.stream();
  auto print = [&](const std::string& piece) {
    if (piece.empty()) return;
    result.text += piece;
    if (on_piece) on_piece(piece);
  };
  auto emit = [&](int32_t token) { print(stream->push(token)); };
  emit(prompt[0]);  // llama2.c: BOS, which prints nothing

  // The prompt in one batch: positions [0, n_batch).
  const int64_t n_batch = std::min(n_prompt, steps);
  auto start = std::chrono::steady_clock::now();
  std::span<const float> logits =
      backend.forward_batch(std::span(prompt).first(static_cast<size_t>(n_batch)), 0);
  result.prompt_ms = ms_since(start);
  result.prompt_positions = n_batch;

  // run.c prints each forced prompt token after the position before it.
  for (int64_t i = 1; i <= std::min(steps, n_prompt - 1); ++i) {
    if (prompt[static_cast<size_t>(i)] == bos) {
      result.stop_reason = StopReason::bos;
      print(stream->finish());
      return result;
    }
    emit(prompt[static_cast<size_t>(i)]);
  }
  if (n_batch < n_prompt) {  // steps ended inside the prompt
    print(stream->finish());
    return result;
  }

  std::vector<float> scratch(static_cast<size_t>(config.vocab_size));  // f32 [vocab_size]
  int32_t token = prompt.back();
  int64_t pos = n_batch;
  start = std::chrono::steady_clock::now();
  while (true) {
    std::copy(logits.begin(), logits.end(), scratch.begin());
    const int32_t next = sampler.sample(scratch);
    if (next == bos) {
      result.stop_reason = StopReason::bos;
      break;
    }
    result.generated_tokens.push_back(next);
    emit(next);
    token = next;
    if (pos >= steps) break;
    logits = backend.forward(token, pos);
    ++pos;
    ++result.decode_positions;
  }
  result.decode_ms = ms_since(start);
  print(stream->finish());
  return result;
}

}  // namespace llama
