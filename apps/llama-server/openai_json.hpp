// The JSON OpenAI's API answers with, built from a finished Completion or a piece of
// one: completion and chat completion objects, their streamed chunks, usage and
// logprobs. Only shapes here; no I/O.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "completion_request.hpp"
#include "llama/batch_generator.hpp"

namespace llama::server {

// What every object and chunk of one response repeats.
struct ResponseHeader {
  Endpoint endpoint = Endpoint::completions;
  std::string id;       // "cmpl-N" / "chatcmpl-N"
  int64_t created = 0;  // Unix seconds
  std::string model;
};

// "stop" (EOS, BOS, a stop string) or "length" (max_tokens, the context, cancelled).
const char* finish_reason(StopReason reason);

nlohmann::json usage_json(const GenerationUsage& usage);

// One choice of a response: the finished request and the logprobs passed on for
// its text (RequestChannel), `index` its prompt's position.
struct Choice {
  int64_t index = 0;
  Completion completion;
  std::vector<GeneratedLogprob> logprobs;
};

// The whole response of a non-streamed request, usage summed over the choices;
// `logprobs` as the request asked, `tokens`: the generated ids too (the choice's
// "tokens", llama.cpp's return_tokens).
nlohmann::json completion_json(const ResponseHeader& h, const std::vector<Choice>& choices,
                               int logprobs, bool tokens);

// A choice's "logprobs": chat's {"content": [...]}, or completions' legacy parallel
// lists with text_offset counted from `offset` (the bytes of the choice's tokens
// before these).
nlohmann::json logprobs_json(Endpoint endpoint, std::span<const GeneratedLogprob> logprobs,
                             size_t offset);

// One streamed chunk of choice `index`: text (chat: "delta", the first one with the
// role), `logprobs` (null: none asked); with `finish`, the last chunk of the choice,
// carrying finish_reason.
nlohmann::json chunk_json(const ResponseHeader& h, int64_t index, std::string_view text, bool first,
                          const nlohmann::json& logprobs = nullptr, const char* finish = nullptr);
// The usage chunk of stream_options.include_usage: "choices": [].
nlohmann::json usage_chunk_json(const ResponseHeader& h, const GenerationUsage& usage);

// `j` as text, invalid UTF-8 (a piece cut inside a character) replaced by U+FFFD
// rather than thrown on.
std::string to_text(const nlohmann::json& j);

}  // namespace llama::server
