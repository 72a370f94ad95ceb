// A BatchGenerator request's own state: its checks, its prompt's progress, and
// each row of logits it gets turned into a token and text exactly as generate()'s
// loop did for one request (the same Sampler calls in the same order), so one
// request alone gives generate()'s tokens.
#include "runtime/batch_request.hpp"

#include <algorithm>

#include "llama/error.hpp"

namespace llama {

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
    case StopReason::cancelled:
      return "cancelled";
    default:
      return "steps";
  }
}

namespace batch {
namespace {

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
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

void check_request(const GenerationRequest& r, const Config& config, int64_t context) {
  if (r.prompt.empty()) throw Error("the request's prompt is empty");
  for (size_t i = 0; i < r.prompt.size(); ++i) {
    if (r.prompt[i] < 0 || r.prompt[i] >= config.vocab_size) {
      throw Error("prompt token " + std::to_string(i) + " is " + std::to_string(r.prompt[i]) +
                  ", outside the vocabulary of " + std::to_string(config.vocab_size));
    }
  }
  if (r.max_tokens < 0) throw Error("max_tokens must be >= 0, got " + std::to_string(r.max_tokens));
  if (r.logprobs < -1 || r.logprobs > kMaxTopLogprobs) {
    throw Error("logprobs must be in [0, " + std::to_string(kMaxTopLogprobs) + "], got " +
                std::to_string(r.logprobs));
  }
  if (r.context < 0 || r.context > context) {
    throw Error("the request's context of " + std::to_string(r.context) +
                " positions is larger than the generator's (" + std::to_string(context) + ")");
  }
  // echo_prompt runs a prompt past its own context up to it (run.c's steps), never
  // past the sequence's.
  const int64_t limit = r.context == 0 || r.echo_prompt ? context : r.context;
  const auto n = static_cast<int64_t>(r.prompt.size());
  if (n > limit) {
    throw Error("the prompt is " + std::to_string(n) + " tokens, longer than the context of " +
                std::to_string(limit) + " positions");
  }
  // The Sampler's and StopMatcher's own checks, with their messages.
  if (!r.sampler) Sampler(1, r.sampling.temperature, r.sampling.top_p, r.sampling.seed);
  StopMatcher{r.stop};
}

Request::Request(uint64_t id, GenerationRequest r, const Config& config, const Tokenizer& tokenizer,
                 int64_t context, std::span<float> scratch, std::function<void(int32_t)> release)
    : req_(std::move(r)),
      tokenizer_(tokenizer),
      release_(std::move(release)),
      stops_(req_.stop),
      stream_(tokenizer.stream()),
      scratch_(scratch),
      vocab_size_(config.vocab_size),
      bos_(tokenizer.special().bos),
      context_(req_.context == 0 ? context : req_.context),
      added_(Clock::now()) {
  prompt_limit_ = std::min(static_cast<int64_t>(req_.prompt.size()), context_);
  out_.id = id;
  out_.usage.prompt_tokens = static_cast<int64_t>(req_.prompt.size());
}

void Request::start(int32_t sequence, int64_t reused) {
  sequence_ = sequence;
  prompt_done_ = position_ = reused;
  out_.usage.cached_prompt_tokens = reused;
  out_.timings.queued_ms = ms_since(added_);
  if (req_.sampler) {
    sampler_ = req_.sampler;
  } else {
    own_sampler_.emplace(vocab_size_, req_.sampling.temperature, req_.sampling.top_p,
                         req_.sampling.seed);
    sampler_ = &*own_sampler_;
  }
  if (req_.echo_prompt) {
    print(stream_->push(req_.prompt[0]));  // llama2.c: BOS, which prints nothing
    echo_until(reused);
  } else {
    // The stream still reads the prompt, so the first generated piece decodes as it
    // does after it (a space after BOS dropped, a character split across the two).
    for (int32_t t : req_.prompt) stream_->push(t);
  }
}

void Request::echo_until(int64_t last) {
  last = std::min(last, static_cast<int64_t>(req_.prompt.size()) - 1);
  while (echoed_ < last && !finished_) {
    const int32_t t = req_.prompt[static_cast<size_t>(++echoed_)];
    if (req_.stop_at_bos && t == bos_) {  // run.c: a BOS forced in the prompt ends it
      finish(StopReason::bos, /*flush=*/true);
      return;
    }
    print(stream_->push(t));
  }
}

void Request::prompt_ran(int64_t n, double ms, std::span<const float> logits) {
  prompt_done_ += n;
  position_ += n;
  last_ = req_.prompt[static_cast<size_t>(prompt_done_ - 1)];
  out_.timings.prompt_ms += ms;
  out_.timings.prompt_positions += n;
  // run.c prints each forced token after the position before it.
  if (req_.echo_prompt) echo_until(prompt_done_);
  if (finished_ || prompt_done_ < prompt_limit_) return;
  if (prompt_limit_ < static_cast<int64_t>(req_.prompt.size())) {
    finish(StopReason::steps, /*flush=*/true);  // run.c's steps ended inside the prompt
    return;
  }
  generating_ = true;
  decode_start_ = Clock::now();
  sample(logits);
}

void Request::decode_ran(std::span<const float> logits) {
  ++position_;
  ++out_.timings.decode_positions;
  last_ = pending_;
  pending_ = -1;
  sample(logits);
}

void Request::sample(std::span<const float> logits) {
  const int32_t next = sampler_->sample(logits, scratch_);
  const bool ends = !req_.ignore_eos;
  if (ends && req_.stop_at_bos && next == bos_) {
    finish(StopReason::bos, /*flush=*/true);
    return;
  }
  if (ends && std::find(req_.eos.begin(), req_.eos.end(), next) != req_.eos.end()) {
    finish(StopReason::eos, /*flush=*/true);
    return;
  }
  out_.tokens.push_back(next);
  const std::string text = stream_->push(next);
  streamed_ += static_cast<int64_t>(text.size());
  if (req_.logprobs >= 0) {
    out_.logprobs.push_back(
        logprob_of(tokenizer_, logits, sampler_->temperature(), last_, next, req_.logprobs));
    logprob_ends_.push_back(streamed_);
  }
  // Generated text passes the stop strings first; the prompt's does not.
  print(stops_.feed(text));
  if (finished_) return;  // on_piece cancelled it
  if (stops_.matched()) {
    pass_logprobs(Pass::partly);  // when the stop left nothing new to print
    if (finished_) return;
    out_.stop_text = stops_.matched_stop();
    finish(StopReason::stop, /*flush=*/false);  // nothing from the stop string on
    return;
  }
  if (req_.max_tokens > 0 && static_cast<int64_t>(out_.tokens.size()) >= req_.max_tokens) {
    finish(StopReason::max_tokens, /*flush=*/true);
    return;
  }
  // The token sampled after the last position is kept, never run (run.c's count).
  if (position_ >= context_) {
    finish(StopReason::steps, /*flush=*/true);
    return;
  }
  pending_ = next;
}

void Request::print(const std::string& piece) {
  if (piece.empty()) return;
  out_.text += piece;
  if (generating_) {
    printed_ += static_cast<int64_t>(piece.size());
    pass_logprobs(stops_.matched() ? Pass::partly : Pass::printed);
  }
  if (req_.on_piece) req_.on_piece(piece);
}

void Request::pass_logprobs(Pass which) {
  size_t end = logprobs_passed_;
  for (; end < logprob_ends_.size(); ++end) {
    const int64_t start = end == 0 ? 0 : logprob_ends_[end - 1];
    const bool passes = which == Pass::all || logprob_ends_[end] <= printed_ ||
                        (which == Pass::partly && start < printed_);
    if (!passes) break;
  }
  if (end == logprobs_passed_) return;
  const size_t from = logprobs_passed_;
  logprobs_passed_ = end;
  if (req_.on_logprobs) req_.on_logprobs(std::span(out_.logprobs).subspan(from, end - from));
}

void Request::finish(StopReason reason, bool flush) {
  if (finished_) return;
  finished_ = true;  // first: a callback below that cancels it finds it ended
  if (flush) {
    if (generating_) {
      print(stops_.feed(stream_->finish()) + stops_.flush());
      // Everything generated is printed now (up to a stop the flush found).
      pass_logprobs(stops_.matched() ? Pass::partly : Pass::all);
    } else {
      print(stream_->finish());
    }
  }
  pending_ = -1;
  out_.stop_reason = reason;
  out_.usage.completion_tokens = static_cast<int64_t>(out_.tokens.size());
  if (generating_) out_.timings.decode_ms = ms_since(decode_start_);
  if (sequence_ < 0) out_.timings.queued_ms = ms_since(added_);
  if (sequence_ >= 0) release_(sequence_);
  if (req_.on_finish) req_.on_finish(out_);
}

}  // namespace batch
}  // namespace llama
