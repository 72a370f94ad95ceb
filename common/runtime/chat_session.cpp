// ChatSession: run.c's chat loop restated as one call per user turn.
#include "llama/chat_session.hpp"

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
                         int64_t steps, bool parse_special)
    : backend_(backend),
      tokenizer_(tokenizer),
      sampler_(sampler),
      system_prompt_(std::move(system_prompt)),
      steps_((steps <= 0 || steps > config.seq_len) ? config.seq_len : steps),
      encode_{.add_special = true, .parse_special = parse_special},
      scratch_(static_cast<size_t>(config.vocab_size)) {
  if (steps < 0) throw Error("steps must be >= 0, got " + std::to_string(steps));
  // A model's embedding may have rows no token uses (padded vocabularies);
  // a token it cannot embed is an error.
  if (tokenizer.vocab_size() > config.vocab_size) {
    throw Error("tokenizer has " + std::to_string(tokenizer.vocab_size()) +
                " entries, more than the model's vocab_size " + std::to_string(config.vocab_size));
  }
}

ChatSession::ChatSession(InferenceBackend& backend, const Config& config,
                         const Tokenizer& tokenizer, Sampler& sampler, std::string system_prompt,
                         int64_t steps, bool parse_special, const chat::TemplateChatFormat* format)
    : ChatSession(backend, config, tokenizer, sampler, std::move(system_prompt), steps,
                  parse_special) {
  format_ = format;
}

int32_t ChatSession::step(int32_t token) {
  const std::span<const float> logits = backend_.forward(token, pos_);
  history_.resize(static_cast<size_t>(pos_));
  history_.push_back(token);
  ++pos_;

  return sampler_.sample(logits, scratch_);
}

ChatTurn ChatSession::turn(std::string_view user, const PieceCallback& on_piece) {
  if (finished()) throw Error("chat: no positions left (steps " + std::to_string(steps_) + ")");
  if (format_ != nullptr) return template_turn(user, on_piece);
  ChatTurn turn;
  turn.stop = ChatStop::steps;
  // run.c feeds the EOS that ended the previous reply before the next turn
  // (and samples after it); its output is not part of any reply.
  if (pending_eos_ >= 0) {
    const int32_t eos = pending_eos_;
    pending_eos_ = -1;
    (void)step(eos);
    if (finished()) return turn;
  }
  turn.prompt_tokens =
      tokenizer_.encode(render_chat_turn(system_prompt_, user, pos_ == 0), encode_);
  if (turn.prompt_tokens.empty()) throw Error("chat: the turn encodes to no tokens");
  int32_t next = 0;
  for (const int32_t token : turn.prompt_tokens) {
    if (finished()) return turn;
    next = step(token);
  }
  reply(turn, next, on_piece);
  return turn;
}

void ChatSession::reply(ChatTurn& turn, int32_t next, const PieceCallback& on_piece) {
  const std::vector<int32_t>& eos = tokenizer_.special().eos;
  // The reply's text: the stream starts after the turn's last token (llama2.c:
  // run.c's decode of the first reply token after it).
  const std::unique_ptr<TextStream> stream = tokenizer_.stream();
  (void)stream->push(turn.prompt_tokens.back());
  auto print = [&](const std::string& piece) {
    if (piece.empty()) return;
    turn.text += piece;
    if (on_piece) on_piece(piece);
  };
  while (true) {
    if (std::find(eos.begin(), eos.end(), next) != eos.end()) {
      turn.stop = ChatStop::eos;
      pending_eos_ = next;
      break;
    }
    turn.reply_tokens.push_back(next);
    print(stream->push(next));
    if (finished()) break;
    next = step(next);
  }
  print(stream->finish());
}

ChatTurn ChatSession::template_turn(std::string_view user, const PieceCallback& on_piece) {
  ChatTurn turn;
  turn.stop = ChatStop::steps;
  if (messages_.empty() && !system_prompt_.empty()) messages_.push_back({"system", system_prompt_});
  messages_.push_back({"user", std::string(user)});
  const std::vector<int32_t> all =
      format_->encode(tokenizer_, format_->render(messages_), encode_.parse_special);
  if (all.empty()) throw Error("chat: the turn encodes to no tokens");
  // Keep the KV cache's longest prefix of the new rendering; the last token is
  // always run, since the reply is sampled after it.
  const auto run = static_cast<size_t>(pos_);
  size_t keep = 0;
  while (keep < run && keep + 1 < all.size() && history_[keep] == all[keep]) ++keep;
  pos_ = static_cast<int64_t>(keep);
  turn.prompt_tokens.assign(all.begin() + static_cast<std::ptrdiff_t>(keep), all.end());
  int32_t next = 0;
  for (const int32_t token : turn.prompt_tokens) {
    if (finished()) return turn;
    next = step(token);
  }
  reply(turn, next, on_piece);
  messages_.push_back({"assistant", turn.text});
  return turn;
}

}  // namespace llama
