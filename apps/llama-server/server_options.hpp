// llama-server's command line: llama-cli's model, tokenizer, backend, numerics,
// KV cache, plugin and chat template flags, and the server's own (address, keys,
// sequences, limits), parsed and range-checked into ServerOptions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "llama/kv_cache.hpp"
#include "llama/numerics.hpp"

namespace llama::server {

enum class Action { serve, help, version, list_backends };

struct ServerOptions {
  Action action = Action::serve;
  std::string checkpoint;     // -c
  std::string tokenizer;      // -k; empty: as llama-cli finds it
  std::string chat_template;  // --chat-template FILE; empty: the model's own
  std::string backend = "blas";
  std::vector<std::string> plugins;
  int threads = 0;
  Numerics numerics = Numerics::exact;
  KvCacheOption kv_cache = KvCacheOption::model_default;
  // Request defaults where a request leaves a field out (-t, --top-p, -r).
  float temperature = 0.0f;
  float top_p = 0.9f;
  std::optional<uint64_t> seed;  // unset: each request without a seed gets the time's
  int32_t parallel = 4;          // sequences generating at once
  int64_t ctx_size = 0;          // positions per sequence (0: the model's)
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port
  std::vector<std::string> api_keys;
  int64_t max_body = int64_t{4} << 20;  // bytes
  int64_t queue = 64;                   // requests waiting for a sequence
  // cpp-httplib's pool: threads serving connections, and connections open at once
  // (served or accepted and waiting for a thread); past that a connection gets 503.
  // Parsing sets both (defaults from --parallel and --queue).
  int64_t http_threads = 72;
  int64_t max_connections = 144;
  int64_t timeout = 600;       // seconds a client may stall reading or writing
  int64_t drain_timeout = 10;  // seconds shutdown lets requests run on
  bool log_prompts = false;
  std::string help_text;
};

// Throws cli::UsageError naming the flag.
ServerOptions parse_server_options(const std::vector<std::string>& args);

}  // namespace llama::server
