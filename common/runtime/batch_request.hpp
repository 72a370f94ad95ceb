// One request of a BatchGenerator between add() and its end: where its prompt
// stands, the token waiting to run, and what becomes of each row of logits it gets
// (generate()'s loop body: sample, the EOS/BOS rules, stop strings, the token
// budget, pieces through the tokenizer's stream). The generator decides when it
// runs; this decides what its tokens and logits mean.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "llama/batch_generator.hpp"
#include "llama/stop_strings.hpp"

namespace llama::batch {

using Clock = std::chrono::steady_clock;

// Checks what add() refuses (one-line Errors); `context` is the generator's.
void check_request(const GenerationRequest& r, const Config& config, int64_t context);

class Request {
 public:
  // `release` frees the request's sequence when it ends, before on_finish runs
  // (so on_finish may add a request that takes it). `scratch` (f32 [vocab_size],
  // shared by the generator's requests, which sample one at a time) takes the logits
  // a sampler overwrites.
  Request(uint64_t id, GenerationRequest r, const Config& config, const Tokenizer& tokenizer,
          int64_t context, std::span<float> scratch, std::function<void(int32_t sequence)> release);

  uint64_t id() const { return out_.id; }
  bool finished() const { return finished_; }
  int32_t sequence() const { return sequence_; }
  std::span<const int32_t> prompt() const { return req_.prompt; }

  // Takes `sequence`, whose cache holds the prompt's first `reused` tokens.
  // echo_prompt: the pieces of those tokens (and the one after), which may end the
  // request at once (a BOS in them).
  void start(int32_t sequence, int64_t reused);
  // The largest prefix of the prompt a cache may hold for this request: one prompt
  // token is always run, so its logits exist.
  int64_t max_reuse() const { return prompt_limit_ - 1; }

  // What the next step runs for it: the sampled token (decoding) or prompt tokens.
  bool decoding() const { return pending_ >= 0; }
  int64_t prompt_left() const { return prompt_limit_ - prompt_done_; }
  int64_t position() const { return position_; }  // positions its sequence holds
  int64_t generated() const { return static_cast<int64_t>(out_.tokens.size()); }
  // i32 [1]: the sampled token, to run at position().
  std::span<const int32_t> pending() const { return {&pending_, 1}; }
  std::span<const int32_t> prompt_chunk(int64_t n) const {
    return std::span(req_.prompt)
        .subspan(static_cast<size_t>(prompt_done_), static_cast<size_t>(n));
  }

  // After a call ran `n` prompt tokens of it in `ms`: `logits` (f32 [vocab_size])
  // when they were its last prompt tokens, else empty.
  void prompt_ran(int64_t n, double ms, std::span<const float> logits);
  // After a call ran its pending token: `logits` f32 [vocab_size].
  void decode_ran(std::span<const float> logits);

  void cancel() { finish(StopReason::cancelled, /*flush=*/false); }

 private:
  void echo_until(int64_t last);  // echo_prompt: prompt pieces up to index `last`
  void sample(std::span<const float> logits);
  void print(const std::string& piece);
  // on_logprobs for the tokens whose text is all printed; `partly`: also those whose
  // text began before the end of what is printed (a stop string cut the rest);
  // `all`: every token left.
  enum class Pass { printed, partly, all };
  void pass_logprobs(Pass which);
  // Ends the request. flush: pass on the text the stream and stop strings hold.
  void finish(StopReason reason, bool flush);

  GenerationRequest req_;
  const Tokenizer& tokenizer_;
  std::function<void(int32_t)> release_;
  // Made at start(), when req_.sampler is null: a Sampler holds f32 [vocab_size]
  // scratch of its own, which a queued request does not need yet.
  std::optional<Sampler> own_sampler_;
  Sampler* sampler_ = nullptr;
  StopMatcher stops_;
  std::unique_ptr<TextStream> stream_;
  std::span<float> scratch_;  // f32 [vocab_size], the generator's
  int64_t vocab_size_ = 0;
  int32_t bos_ = -1;
  int64_t context_ = 0;       // positions it may hold
  int64_t prompt_limit_ = 0;  // prompt tokens to run (below the prompt's only for echo_prompt)
  int64_t prompt_done_ = 0;   // prompt tokens its sequence holds
  int64_t echoed_ = 0;        // echo_prompt: the last prompt index whose piece went out
  int64_t position_ = 0;      // positions its sequence holds
  int32_t pending_ = -1;      // sampled and not yet run (-1: none)
  int32_t last_ = -1;         // the last token run (logprobs' piece follows it)
  int32_t sequence_ = -1;
  // Generated text: bytes the stream gave, bytes printed (past the stop strings),
  // where each logprob's token ends in the stream's bytes, logprobs passed on.
  int64_t streamed_ = 0;
  int64_t printed_ = 0;
  std::vector<int64_t> logprob_ends_;
  size_t logprobs_passed_ = 0;
  bool generating_ = false;  // past the prompt: text goes through the stop strings
  bool finished_ = false;
  Clock::time_point added_, decode_start_;
  Completion out_;
};

}  // namespace llama::batch
