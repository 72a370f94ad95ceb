// How a conversation becomes the model's tokens: a model's own Jinja chat
// template (tokenizer_config.json, GGUF, --chat-template), rendered for the
// whole conversation with the generation prompt, and encoded so that the
// template's bos_token / eos_token strings become those ids even with a
// tokenizer that parses no special tokens (llama2.c's tokenizer.bin).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "llama/chat/model_template.hpp"
#include "llama/chat/template.hpp"
#include "llama/tokenizers/tokenizer.hpp"

namespace llama::chat {

struct ChatMessage {
  std::string role;  // "system", "user", "assistant"
  std::string content;
};

class TemplateChatFormat {
 public:
  // Parses t.source; throws TemplateError (prefixed with t.origin) when it cannot.
  explicit TemplateChatFormat(ModelChatTemplate t);

  // The conversation's text with add_generation_prompt true. Throws Error
  // naming the template (a conversation the template rejects: its message).
  std::string render(const std::vector<ChatMessage>& messages) const;

  // `text` as tokens: the tokenizer's own special tokens are not added (the
  // template writes them), occurrences of bos_token / eos_token become the
  // tokenizer's BOS / first EOS id, the text between is encoded with
  // `parse_special`.
  std::vector<int32_t> encode(const Tokenizer& tok, std::string_view text,
                              bool parse_special) const;

  const ModelChatTemplate& source() const { return t_; }

 private:
  ModelChatTemplate t_;
  ChatTemplate parsed_;
};

}  // namespace llama::chat
