// The generation loop: the prompt through forward_batch, then one forward per token.
#include "llama/generate.hpp"

#include <algorithm>
#include <chrono>

#include "llama/error.hpp"
#include "llama/stop_strings.hpp"

namespace llama {
namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

const char* to_string(StopReason reason) {
  switch (reason) {
    case StopReason::bos:
      return "bos";
    case StopReason::eos:
      return "eos";
    case StopReason::stop:
      return "stop";
    case StopReason::max_tokens:
      return "max_tokens";
    default:
      return "steps";
  }
}

double GenerationResult::prompt_tok_per_s() const {
  return prompt_ms > 0 ? static_cast<double>(prompt_positions) * 1000.0 / prompt_ms : 0.0;
}

double GenerationResult::decode_tok_per_s() const {
  return decode_ms > 0 ? static_cast<double>(decode_positions) * 1000.0 / decode_ms : 0.0;
}

namespace {

void check_options(const GenerationOptions& o, const Config& config) {
  if (o.steps < 0) throw Error("steps must be >= 0, got " + std::to_string(o.steps));
  if (o.max_tokens < 0) throw Error("max_tokens must be >= 0, got " + std::to_string(o.max_tokens));
  if (o.context < 0 || o.context > config.seq_len) {
    throw Error("the context of " + std::to_string(o.context) +
                " positions is larger than the model's (seq_len " + std::to_string(config.seq_len) +
                ")");
  }
  if (o.logprobs < -1 || o.logprobs > kMaxTopLogprobs) {
    throw Error("logprobs must be in [0, " + std::to_string(kMaxTopLogprobs) + "], got " +
                std::to_string(o.logprobs));
  }
}

GeneratedLogprob logprob_of(const Tokenizer& tok, std::span<const float> logits, float temperature,
                            int32_t prev, int32_t token, int k) {
  GeneratedLogprob g;
  g.value = token_logprob(logits, temperature, token, k);
  g.piece = tok.decode_token(prev, token);
  for (const TokenAlternative& a : g.value.top)
    g.top_pieces.push_back(tok.decode_token(prev, a.id));
  return g;
}

}  // namespace

GenerationResult generate(InferenceBackend& backend, const Config& config,
                          const Tokenizer& tokenizer, Sampler& sampler,
                          const GenerationOptions& options, const PieceCallback& on_piece) {
  check_options(options, config);
  StopMatcher stops(options.stop);  // refuses an empty stop string
  // A model's embedding may have rows no token uses (padded vocabularies);
  // a token it cannot embed is an error.
  if (tokenizer.vocab_size() > config.vocab_size) {
    throw Error("tokenizer has " + std::to_string(tokenizer.vocab_size()) +
                " entries, more than the model's vocab_size " + std::to_string(config.vocab_size));
  }
  const int64_t context = options.context == 0 ? config.seq_len : options.context;
  const int64_t steps = (options.steps == 0 || options.steps > context) ? context : options.steps;

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
  result.prompt_encoded = static_cast<int64_t>(result.prompt_tokens.size());
  const int64_t reserve = options.max_tokens > 0 ? options.max_tokens : context / 2;
  result.prompt_dropped =
      fit_prompt(result.prompt_tokens, context, reserve, options.truncation, bos);
  const auto& prompt = result.prompt_tokens;
  const auto n_prompt = static_cast<int64_t>(prompt.size());

  const std::unique_ptr<TextStream> stream = tokenizer.stream();
  auto print = [&](const std::string& piece) {
    if (piece.empty()) return;
    result.text += piece;
    if (on_piece) on_piece(piece);
  };
  auto emit = [&](int32_t token) { print(stream->push(token)); };
  // Generated text passes the stop strings first; the prompt's does not.
  auto emit_generated = [&](int32_t token) { print(stops.feed(stream->push(token))); };
  auto finish = [&] { print(stops.feed(stream->finish()) + stops.flush()); };
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
    if (options.stop_at_bos && prompt[static_cast<size_t>(i)] == bos) {
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

  const auto is_eos = [&](int32_t t) {
    return std::find(options.eos.begin(), options.eos.end(), t) != options.eos.end();
  };
  std::vector<float> scratch(static_cast<size_t>(config.vocab_size));  // f32 [vocab_size]
  int32_t token = prompt.back();
  int64_t pos = n_batch;
  start = std::chrono::steady_clock::now();
  while (true) {
    const int32_t next = sampler.sample(logits, scratch);
    if (!options.ignore_eos && options.stop_at_bos && next == bos) {
      result.stop_reason = StopReason::bos;
      break;
    }
    if (!options.ignore_eos && is_eos(next)) {
      result.stop_reason = StopReason::eos;
      break;
    }
    result.generated_tokens.push_back(next);
    if (options.logprobs >= 0) {
      result.logprobs.push_back(
          logprob_of(tokenizer, logits, sampler.temperature(), token, next, options.logprobs));
    }
    emit_generated(next);
    token = next;
    if (stops.matched()) {
      result.stop_reason = StopReason::stop;
      result.stop_text = stops.matched_stop();
      break;
    }
    if (options.max_tokens > 0 &&
        static_cast<int64_t>(result.generated_tokens.size()) >= options.max_tokens) {
      result.stop_reason = StopReason::max_tokens;
      break;
    }
    if (pos >= steps) break;
    logits = backend.forward(token, pos);
    ++pos;
    ++result.decode_positions;
  }
  result.decode_ms = ms_since(start);
  if (!stops.matched()) finish();
  return result;
}

}  // namespace llama
