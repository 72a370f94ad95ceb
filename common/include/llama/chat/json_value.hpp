// Template values from JSON text: a conversation as OpenAI-style messages
// ([{"role": "user", "content": "Hi"}, ...]) or any other variables a
// template reads (tools, documents, ...).
#pragma once

#include <cstddef>
#include <string_view>

#include "llama/chat/value.hpp"

namespace llama::chat {

// The memory the values of one JSON text may take: sizeof(Value) per value
// plus its string and key bytes. JSON's 2 bytes for `0,` become ~90 bytes
// of Value, so a text's values are bounded here rather than by its size; a
// conversation that renders within RenderLimits' 16 MiB of output needs a
// small fraction of this.
inline constexpr size_t kMaxJsonValueBytes = size_t{128} << 20;

// Parses `json` (numbers: integers when integral and in int64 range, else
// floats). Throws llama::Error naming `what` on malformed JSON, nesting
// deeper than Value::kMaxDepth, or values past kMaxJsonValueBytes.
Value value_from_json(std::string_view json, std::string_view what);

// The variables a template renders with, from JSON: a list is `messages`; an
// object gives one variable per key (messages, tools, ...). Throws Error.
Object variables_from_json(std::string_view json, std::string_view what);

}  // namespace llama::chat
