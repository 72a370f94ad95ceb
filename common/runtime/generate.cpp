// generate(): run.c's generation as one request of a BatchGenerator. This file keeps
// what is generate()'s own (encoding the prompt, fitting it to the context, run.c's
// steps); the loop (the prompt, then one token a step, sampling, stop rules,
// pieces) is the generator's.
#include "llama/generate.hpp"

#include <algorithm>

#include "llama/error.hpp"
#include "llama/stop_strings.hpp"

namespace llama {

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

}  // namespace

GenerationResult generate(InferenceBackend& backend, const Config& config,
                          const Tokenizer& tokenizer, Sampler& sampler,
                          const GenerationOptions& options, const PieceCallback& on_piece) {
  check_options(options, config);
  StopMatcher{options.stop};  // refuses an empty stop string, before the prompt is encoded
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
  const auto n_prompt = static_cast<int64_t>(result.prompt_tokens.size());

  // One sequence, the whole prompt in one call (the budget is the context, which
  // the prompt fits), one call per generated token. On a backend that claims batch
  // invariance the calls are forward_runs, so the tokens are those the same request
  // gets beside any others (a server's); elsewhere forward_batch and forward.
  BatchGenerator generator(
      backend, config, tokenizer,
      {.sequences = 1,
       .context = context,
       .token_budget = context,
       .max_queue = 0,
       .calls = backend.batch_invariant() ? StepCalls::forward_runs : StepCalls::forward});
  GenerationRequest request;
  request.prompt = result.prompt_tokens;
  request.sampler = &sampler;
  request.max_tokens = options.max_tokens;
  request.stop = options.stop;
  request.eos = options.eos;
  request.stop_at_bos = options.stop_at_bos;
  request.ignore_eos = options.ignore_eos;
  request.logprobs = options.logprobs;
  // run.c's steps count the prompt; below its length, the prompt is cut there
  // (echo_prompt's rule) and nothing is sampled.
  request.context = steps;
  request.echo_prompt = true;
  request.on_piece = on_piece;
  Completion done;
  request.on_finish = [&done](const Completion& c) { done = c; };
  generator.add(std::move(request));
  generator.run();

  result.generated_tokens = std::move(done.tokens);
  result.stop_reason = done.stop_reason;
  result.stop_text = std::move(done.stop_text);
  result.logprobs = std::move(done.logprobs);
  result.text = std::move(done.text);
  result.prompt_ms = done.timings.prompt_ms;
  result.prompt_positions = std::min(n_prompt, steps);
  result.decode_ms = done.timings.decode_ms;
  result.decode_positions = done.timings.decode_positions;
  return result;
}

}  // namespace llama
