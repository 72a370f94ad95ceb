// Opening the model and starting the engine (loaded_model.hpp).
#include "loaded_model.hpp"

#include <filesystem>

#include "chat_template_flag.hpp"
#include "error_report.hpp"
#include "llama/generate.hpp"
#include "llama/registry.hpp"
#include "model_context.hpp"

namespace llama::server {
namespace {

std::string model_name(const std::string& checkpoint) {
  const std::filesystem::path p(checkpoint);
  const std::string name = p.filename().string();
  return name.empty() ? p.parent_path().filename().string() : name;
}

}  // namespace

LoadedModel::LoadedModel(const ServerOptions& o)
    : checkpoint(cli::during("reading " + o.checkpoint,
                             [&] { return cli::OpenedCheckpoint::open(o.checkpoint); })),
      model(cli::with_context(checkpoint.model(), o.ctx_size)),
      tokenizer(
          cli::during("reading the tokenizer", [&] { return checkpoint.tokenizer(o.tokenizer); })),
      chat_format(cli::chat_format(o.checkpoint, o.tokenizer, o.chat_template, *tokenizer,
                                   checkpoint.chat_template())),
      name(model_name(o.checkpoint)) {
  GenerationOptions stopping;
  checkpoint.set_stopping(stopping);
  eos = stopping.eos;
  stop_at_bos = stopping.stop_at_bos;

  BackendOptions bo;
  bo.threads = o.threads;
  bo.numerics = o.numerics;
  bo.kv_cache = o.kv_cache;
  bo.sequences = o.parallel;
  backend_ = BackendRegistry::instance().create(o.backend, bo);
  cli::during("preparing backend " + o.backend + " for " + o.checkpoint,
              [&] { backend_->prepare(model); });
  engine = std::make_unique<Engine>(
      *backend_, model.config, *tokenizer,
      EngineOptions{.sequences = o.parallel, .context = 0, .max_queue = o.queue});
}

}  // namespace llama::server
