// The body of POST /v1/completions and /v1/chat/completions turned into a checked
// request, before any tokenizer or model is involved: every field the server honours
// with its type and range checked, and any field it cannot honour refused by name
// (never silently ignored). fuzz/fuzz_server_request.cpp runs it on hostile bodies.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llama/chat/chat_format.hpp"

namespace llama::server {

enum class Endpoint { completions, chat_completions };

// Limits on a request's parts that the body size alone does not bound tightly.
inline constexpr size_t kMaxStopStrings = 16;
inline constexpr size_t kMaxStopBytes = 1024;
inline constexpr int kMaxCompletionLogprobs = 5;  // OpenAI's limit for /v1/completions
inline constexpr int kMaxChatTopLogprobs = 20;    // and for top_logprobs in chat
// Prompts in one /v1/completions request, each run as its own sequence.
inline constexpr size_t kMaxPrompts = 32;

// One completions prompt: text, or token ids (unchecked against the vocabulary here).
struct Prompt {
  std::string text;
  std::vector<int64_t> tokens;
  bool is_tokens = false;
};

struct CompletionRequest {
  Endpoint endpoint = Endpoint::completions;
  std::string model;  // echoed; empty: the server's model name
  // completions: 1..kMaxPrompts prompts, none empty; one choice each, in order.
  std::vector<Prompt> prompts;
  // chat: the conversation, rendered later with the chat template.
  std::vector<chat::ChatMessage> messages;
  std::optional<int64_t> max_tokens;  // >= 1; unset: until the context is full
  std::optional<float> temperature;   // [0, 2]; unset: the server's default
  std::optional<float> top_p;         // [0, 1]
  std::optional<uint64_t> seed;
  std::vector<std::string> stop;  // non-empty strings
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  int logprobs = -1;           // -1: none; else alternatives per token (0..20)
  bool ignore_eos = false;
  bool return_tokens = false;  // llama.cpp's extension: the generated ids in the choice
};

// Parses and checks `body`; throws ApiError (400, naming the field) for invalid JSON,
// a wrong type or range, or a field the server cannot honour.
CompletionRequest parse_completion_request(std::string_view body, Endpoint endpoint);

}  // namespace llama::server
