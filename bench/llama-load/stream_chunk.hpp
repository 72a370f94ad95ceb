// What one SSE event of an OpenAI-compatible completions or chat stream carries:
// generated text, the usage count, an error, or the end marker.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace llama::load {

enum class Endpoint { completions, chat };

struct StreamChunk {
  bool done = false;                         // `[DONE]`
  bool has_content = false;                  // non-empty text (completions) or delta.content (chat)
  std::optional<int64_t> completion_tokens;  // usage.completion_tokens, when the chunk has usage
  std::optional<std::string> error;          // `{"error": ...}` or a payload that is not JSON
};

// `data` (one event's data) read as `endpoint`'s stream chunk.
StreamChunk parse_stream_chunk(std::string_view data, Endpoint endpoint);

// The one-line message of an error body: `error.message` (or a string `error`) of an
// OpenAI-shaped object, else the body itself cut to a line.
std::string error_message(std::string_view body);

}  // namespace llama::load
