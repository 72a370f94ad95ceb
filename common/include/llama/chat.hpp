// run.c's chat mode, one turn at a time: the Llama 2 chat template, the
// rendered turn forced (BOS first, no EOS), then the assistant's reply sampled
// until it samples EOS or the session runs out of positions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "llama/backend.hpp"
#include "llama/generate.hpp"
#include "llama/sampler.hpp"
#include "llama/tokenizers/llama2c_tokenizer.hpp"

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
              Sampler& sampler, std::string system_prompt, int64_t steps);

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

  InferenceBackend& backend_;
  const Tokenizer& tokenizer_;
  Sampler& sampler_;
  std::string system_prompt_;
  int64_t steps_;
  int64_t pos_ = 0;
  bool pending_eos_ = false;    // the last reply ended in EOS, not yet fed
  std::vector<float> scratch_;  // f32 [vocab_size] logits the sampler may overwrite
};

}  // namespace llama
