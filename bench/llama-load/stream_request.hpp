// One streamed completions or chat request, timed: when each content chunk arrived,
// how many tokens the server generated, and how it ended.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "load_options.hpp"

namespace llama::load {

struct RequestRecord {
  bool ok = false;
  int status = 0;                  // the HTTP status; 0 when no answer came (connection, timeout)
  std::string error;               // one line, when !ok
  std::optional<double> ttft_s;    // request sent -> first content chunk
  std::vector<double> gaps_s;      // between successive content chunks
  double total_s = 0;              // request sent -> stream ended
  int64_t tokens = 0;              // generated tokens
  bool tokens_from_usage = false;  // else counted as content chunks (no usage chunk came)
  int64_t chunks = 0;              // content chunks
  // Per-request decode speed: (tokens - 1) / (last chunk - first chunk); none for one chunk.
  std::optional<double> decode_tokens_per_s() const;
};

// The JSON body of a request of `prompt` (stream with usage, ignore_eos, max_tokens).
std::string request_body(const LoadOptions& o, const std::string& prompt);

// The route of o.endpoint.
const char* endpoint_path(const LoadOptions& o);

// Sends `body` to o's server on a new connection and reads the stream to its end.
RequestRecord stream_request(const LoadOptions& o, const std::string& body);

// Whether anything answers HTTP at o.url (GET /v1/models): nullopt if so, else why not.
std::optional<std::string> unreachable(const LoadOptions& o);

}  // namespace llama::load
