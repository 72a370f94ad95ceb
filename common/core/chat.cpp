// ChatSession: run.c's chat loop restated as one call per user turn.
#include "llama/chat.hpp"

#include <algorithm>

#include "llama/error.hpp"

namespace llama {

std::string render_chat_turn(std::string_view system_prompt, std::string_view user,
                             bool first_turn) {
  std::string out = "[INST] ";
  if (first_turn && !system_prompt.empty()) {
    out.append("<<SYS>>\n").append(system_prompt).append("\n<</SYS>>\n\n");
  }
  out.append(user).append(" [/INST]");
  return out;
}

const char* to_string(ChatStop stop) { return stop == ChatStop::eos ? "eos" : "steps"; }

ChatSession::ChatSession(InferenceBackend& backend, const Config& config,
                         const Tokenizer& tokenizer, Sampler& sampler, std::string system_prompt,
                         int64_t steps)
    : backend_(backend),
      tokenizer_(tokenizer),
      sampler_(sampler),
      system_prompt_(std::move(system_prompt)),
      steps_((steps <= 0 || steps > config.seq_len) ? config.seq_len : steps),
      scratch_(static_cast<size_t>(config.vocab_size)) {
  if (steps < 0) throw Error("steps must be >= 0, got " + std::to_string(steps));
  if (tokenizer.vocab_size() != config.vocab_size) {
    throw Error("tokenizer has " + std::to_string(tokenizer.vocab_size()) +
                " entries, model vocab_size is " + std::to_string(config.vocab_size));
  }
}

int32_t ChatSession::step(int32_t token) {
  const std::span<const float> logits = backend_.forward(token, pos_);
  ++pos_;
  std::copy(logits.begin(), logits.end(), scratch_.begin());
  return sampler_.sample(scratch_);
}

ChatTurn ChatSession::turn(std::string_view user, const PieceCallback& on_piece) {
  if (finished()) throw Error("chat: no positions left (steps " + std::to_string(steps_) + ")");
  ChatTurn turn;
  turn.stop = ChatStop::steps;
  // run.c feeds the EOS that ended the previous reply before the next turn
  // (and samples after it); its output is not part of any reply.
  if (pending_eos_) {
    pending_eos_ = false;
    (void)step(kEosToken);
    if (finished()) return turn;
  }
  turn.prompt_tokens =
      tokenizer_.encode(render_chat_turn(system_prompt_, user, pos_ == 0), true, false);
  int32_t next = 0;
  for (const int32_t token : turn.prompt_tokens) {
    if (finished()) return turn;
    next = step(token);
  }
  int32_t token = turn.prompt_tokens.back();
  while (true) {
    if (next == kEosToken) {
      turn.stop = ChatStop::eos;
      pending_eos_ = true;
      return turn;
    }
    turn.reply_tokens.push_back(next);
    const std::string piece = tokenizer_.decode(token, next);
    if (Tokenizer::is_printable_piece(piece)) {
      turn.text += piece;
      if (on_piece) on_piece(piece);
    }
    token = next;
    if (finished()) return turn;
    next = step(token);
  }
}

}  // namespace llama
