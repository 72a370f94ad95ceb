// llama-cli's command line: parsing and validation into CliOptions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "control_flags.hpp"
#include "generation_flags.hpp"  // UsageError
#include "llama/kv_cache.hpp"
#include "llama/numerics.hpp"

namespace llama::cli {

enum class Action { generate, help, version, list_backends, verify_checkpoint, tokenize, explain };
enum class OutputFormat { text, json };
enum class Mode { generate, chat };

struct CliOptions {
  Action action = Action::generate;
  std::string checkpoint;
  std::string tokenizer;  // empty: beside the checkpoint, else ./tokenizer.bin
  float temperature = 0.0f;
  float top_p = 0.9f;
  int64_t steps = 256;
  std::string prompt;
  std::optional<uint64_t> seed;  // unset or 0: the time, as run.c
  std::string backend = "blas";
  std::vector<std::string> plugins;     // --plugin FILE, in order
  int threads = 0;                      // 0: every core
  Numerics numerics = Numerics::exact;  // --numerics
  KvCacheOption kv_cache = KvCacheOption::model_default;  // --kv-cache
  OutputFormat format = OutputFormat::text;
  Mode mode = Mode::generate;
  bool prompt_given = false;  // chat: -p is the first user message, else read from stdin
  std::string system_prompt;  // chat: -y, empty for none
  std::string chat_template;  // chat: --chat-template FILE, empty for the model's own
  bool parse_special = true;  // added tokens spelled in the prompt become those tokens
  ControlFlags control;       // --max-tokens, --stop, --ignore-eos, --ctx-size, ...
  std::string help_text;
};

CliOptions parse_cli(const std::vector<std::string>& args);

// The tokenizer path to use: the flag, else tokenizer.bin beside the
// checkpoint, else tokenizer.bin in the working directory.
std::string resolve_tokenizer_path(const CliOptions& options);

}  // namespace llama::cli
