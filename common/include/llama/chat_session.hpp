// run.c's chat mode, one turn at a time: the Llama 2 chat template, the
// rendered turn forced (with the tokenizer's own special tokens: BOS first, no
// EOS), then the assistant's reply sampled until it samples one of the
// tokenizer's EOS ids or the session runs out of positions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "llama/backend.hpp"
#include "llama/chat/chat_format.hpp"
#include "llama/generate.hpp"
#include "llama/sampler.hpp"
#include "llama/tokenizers/tokenizer.hpp"

namespace llama {

// The first turn with a non-empty system prompt:
//   "[INST] <<SYS>>\n{system}\n<</SYS>>\n\n{user} [/INST]"
// any other turn: "[INST] {user} [/INST]".
std::string render_chat_turn(std::string_view system_prompt, std::string_view user,
                             bool first_turn);

enum class ChatStop { eos, steps };
const char* to_string(ChatStop stop);

struct ChatTurn {
  std::vector<int32_t> prompt_tokens;  // the rendered turn, BOS first
  std::vector<int32_t> reply_tokens;   // sampled, without the final EOS
  std::string text;                    // printed pieces of the reply
  ChatStop stop = ChatStop::eos;
};

class ChatSession {
 public:
  // `backend` must have been prepared with a model of `config`; the session
  // starts at position 0 and runs at most `steps` positions in all (0 or more
  // than seq_len: seq_len), as run.c.
  ChatSession(InferenceBackend& backend, const Config& config, const Tokenizer& tokenizer,
              Sampler& sampler, std::string system_prompt, int64_t steps,
              bool parse_special = true);
  // The same with a model's Jinja chat template instead of run.c's Llama 2
  // format: each turn renders the whole conversation (system prompt, turns,
  // replies, generation prompt) and runs the tokens past the longest prefix
  // already in the KV cache; positions after it are run again in order (the
  // backend overwrites them). `format` must outlive the session.
  ChatSession(InferenceBackend& backend, const Config& config, const Tokenizer& tokenizer,
              Sampler& sampler, std::string system_prompt, int64_t steps, bool parse_special,
              const chat::TemplateChatFormat* format);

  // One user turn and the assistant's reply; each printable reply piece goes
  // to `on_piece`. Throws Error once finished().
  ChatTurn turn(std::string_view user, const PieceCallback& on_piece = {});

  // No positions left.
  bool finished() const { return pos_ >= steps_; }
  int64_t position() const { return pos_; }

 private:
  // forward + sample at the next position (run.c samples after every
  // position, forced or not, so the RNG advances the same way).
  int32_t step(int32_t token);
  ChatTurn template_turn(std::string_view user, const PieceCallback& on_piece);
  // Samples the reply after `next` (already drawn) until EOS or no positions.
  void reply(ChatTurn& turn, int32_t next, const PieceCallback& on_piece);

  InferenceBackend& backend_;
  const Tokenizer& tokenizer_;
  Sampler& sampler_;
  std::string system_prompt_;
  int64_t steps_;
  EncodeOptions encode_;  // the turns' encoding
  int64_t pos_ = 0;
  int32_t pending_eos_ = -1;    // the EOS that ended the last reply, not yet fed
  std::vector<float> scratch_;  // f32 [vocab_size] logits the sampler may overwrite
  const chat::TemplateChatFormat* format_ = nullptr;  // null: run.c's Llama 2 format
  std::vector<chat::ChatMessage> messages_;           // template: the conversation so far
  std::vector<int32_t> history_;                      // every token run, position by position
};

}  // namespace llama
