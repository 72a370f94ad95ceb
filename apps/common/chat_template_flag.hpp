// The chat template an app renders conversations with (llama-cli -m chat,
// llama-server): --chat-template FILE, else the tokenizer_config.json beside the
// tokenizer, else the checkpoint's own; shared so every app picks it the same way.
#pragma once

#include <optional>
#include <string>

#include "llama/chat/chat_format.hpp"
#include "llama/chat/model_template.hpp"
#include "llama/tokenizers/tokenizer.hpp"

namespace llama::cli {

// The chat template a session uses: `chat_template_flag` (--chat-template FILE: Jinja
// source, or a tokenizer_config.json), else the chat_template of the
// tokenizer_config.json beside the tokenizer (-k DIR or DIR/tokenizer.json), else
// `embedded` (the checkpoint's own: a GGUF's tokenizer.chat_template), else none
// (nullopt). bos_token / eos_token come from that tokenizer_config.json, else from
// the tokenizer's own BOS and EOS pieces. `checkpoint` and `tokenizer_flag` are -c
// and -k as given (resolve_tokenizer_path).
std::optional<chat::TemplateChatFormat> chat_format(
    const std::string& checkpoint, const std::string& tokenizer_flag,
    const std::string& chat_template_flag, const Tokenizer& tokenizer,
    const chat::ModelChatTemplate* embedded = nullptr);

}  // namespace llama::cli
