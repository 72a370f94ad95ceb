// Template values from JSON text: a conversation as OpenAI-style messages
// ([{"role": "user", "content": "Hi"}, ...]) or any other variables a
// template reads (tools, documents, ...).
#pragma once

#include <string_view>

#include "llama/chat/value.hpp"

namespace llama::chat {

// Parses `json` (numbers: integers when integral and in int64 range, else
// floats). Throws llama::Error naming `what` on malformed JSON or nesting
// deeper than Value::kMaxDepth.
Value value_from_json(std::string_view json, std::string_view what);

// The variables a template renders with, from JSON: a list is `messages`; an
// object gives one variable per key (messages, tools, ...). Throws Error.
Object variables_from_json(std::string_view json, std::string_view what);

}  // namespace llama::chat
