// llama-load's flags (docs/performance.md, "Serving load"), parsed with the apps'
// shared Boost.Program_options helpers; bad usage throws cli::UsageError naming the flag.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stream_chunk.hpp"

namespace llama::load {

struct LoadOptions {
  bool help = false;
  bool version = false;
  std::string help_text;

  std::string url = "http://127.0.0.1:8080";
  std::string host = "127.0.0.1";  // from url
  int port = 8080;                 // from url
  std::string api_key;
  Endpoint endpoint = Endpoint::completions;
  std::vector<int> concurrency{1};
  int64_t requests = 0;           // per level; 0 when --duration is given
  double duration = 0;            // seconds per level; 0 when --requests is used
  std::string prompt;             // --prompt, or the one built for --prompt-tokens
  int64_t prompt_tokens = 0;      // --prompt-tokens, else 0
  bool distinct_prompts = false;  // each request's prompt starts differently (prompt_text.hpp)
  int64_t max_tokens = 128;
  double temperature = 0;
  std::optional<uint64_t> seed;
  int64_t warmup = 1;
  std::string model;
  bool json = false;
  double timeout = 600;  // seconds a request may wait for the server's next bytes
};

LoadOptions parse_load_options(const std::vector<std::string>& args);

// "http://HOST[:PORT][/]" split; throws UsageError (naming --url) for anything else.
void parse_url(const std::string& url, std::string& host, int& port);

}  // namespace llama::load
