// llama-cli -m chat: run.c's chat mode on a terminal or a pipe.
#pragma once

#include <istream>
#include <optional>
#include <vector>

#include <ostream>
#include "llama/chat/chat_format.hpp"

#include "cli_options.hpp"
#include "llama/backend.hpp"
#include "llama/tokenizers/tokenizer.hpp"

namespace llama::cli {

// The first user message is -p (when given), later ones are lines of `in`;
// end of input ends the session (exit 0), as does running out of steps.
// Text: "User: " before each line read, "Assistant: " before each reply,
// streamed. JSON: one object at the end with every turn.
// With `format`, turns are rendered by that chat template; null: run.c's Llama 2 format.
int run_chat(const CliOptions& options, const Model& model, const Tokenizer& tokenizer,
             InferenceBackend& backend, const chat::TemplateChatFormat* format, std::istream& in,
             std::ostream& out, std::ostream& err);

// The chat template a session uses: --chat-template FILE (Jinja source, or a
// tokenizer_config.json), else the chat_template of the tokenizer_config.json
// beside the tokenizer (-k DIR or DIR/tokenizer.json), else none (run.c's
// built-in format, as for llama2.c files). bos_token / eos_token come from that
// tokenizer_config.json, else from the tokenizer's own BOS and EOS pieces.
// `embedded`: the checkpoint's own template (a GGUF's tokenizer.chat_template),
// used when neither --chat-template nor a tokenizer_config.json gives one.
std::optional<chat::TemplateChatFormat> chat_format(
    const CliOptions& options, const Tokenizer& tokenizer,
    const chat::ModelChatTemplate* embedded = nullptr);

// The first turn as the model sees it (--tokenize -m chat).
std::vector<int32_t> first_turn_tokens(const CliOptions& options, const Tokenizer& tokenizer,
                                       const chat::TemplateChatFormat* format);

}  // namespace llama::cli
