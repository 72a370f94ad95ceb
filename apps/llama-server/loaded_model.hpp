// Everything llama-server serves from, opened once: the checkpoint, its tokenizer and
// chat template, the backend prepared for --parallel sequences of --ctx-size
// positions, and the engine stepping it. Immutable once built (the engine aside),
// so HTTP threads read it without locks.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine.hpp"
#include "llama/backend.hpp"
#include "llama/chat/chat_format.hpp"
#include "llama/tokenizers/tokenizer.hpp"
#include "opened_checkpoint.hpp"
#include "server_options.hpp"

namespace llama::server {

class LoadedModel {
 public:
  // Opens and prepares as llama-cli does, naming the stage that fails (llama::Error).
  explicit LoadedModel(const ServerOptions& options);

  const cli::OpenedCheckpoint checkpoint;
  const Model model;  // with --ctx-size applied
  const std::shared_ptr<const Tokenizer> tokenizer;
  const std::optional<chat::TemplateChatFormat> chat_format;  // none: chat is refused
  const std::string name;                                     // /v1/models' id
  std::vector<int32_t> eos;                                   // the format's stopping rule
  bool stop_at_bos = true;

 private:
  std::unique_ptr<InferenceBackend> backend_;

 public:
  // Declared last: destroyed first, while the backend it steps still exists.
  std::unique_ptr<Engine> engine;
};

}  // namespace llama::server
