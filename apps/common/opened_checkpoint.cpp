// OpenedCheckpoint: -c PATH as a llama2.c file, a Hugging Face checkpoint or a GGUF.
#include "opened_checkpoint.hpp"

#include "flag_files.hpp"
#include "generation_flags.hpp"
#include "llama/error.hpp"

namespace llama::cli {

OpenedCheckpoint OpenedCheckpoint::open(const std::string& path, int64_t context_cap) {
  // Before any reader sniffs it: the GGUF magic check would wait on a FIFO forever.
  require_file_or_directory("--checkpoint", path);
  OpenedCheckpoint ck;
  ck.path_ = path;
  if (looks_like_hf_checkpoint(path)) {
    ck.hf_.emplace(open_hf_model(path, context_cap));
  } else if (gguf::is_gguf(path)) {
    ck.gguf_.emplace(gguf::open_model(path));  // the backends run its tensors in place
  } else {
    ck.llama2c_.emplace(Checkpoint::open(path));
  }
  return ck;
}

const Model& OpenedCheckpoint::model() const {
  if (hf_) return hf_->model;
  return gguf_ ? gguf_->model : llama2c_->model();
}

int64_t OpenedCheckpoint::weight_bytes() const {
  if (hf_) return hf_->checkpoint.weight_bytes();
  return gguf_ ? gguf_->model.weights.bytes() : llama2c_->weight_bytes();
}

std::shared_ptr<const Tokenizer> OpenedCheckpoint::tokenizer(
    const std::string& tokenizer_flag) const {
  if (gguf_ && tokenizer_flag.empty()) {
    if (!gguf_->tokenizer) {
      throw Error(model().source + ": holds no tokenizer (tokenizer.ggml.*): give one with -k");
    }
    return gguf_->tokenizer;
  }
  const std::string path = resolve_tokenizer_path(path_, tokenizer_flag);
  require_file_or_directory("--tokenizer", path);  // the JSON sniff reads before the type check
  return open_tokenizer(path, {.vocab_size = config().vocab_size});
}

const chat::ModelChatTemplate* OpenedCheckpoint::chat_template() const {
  return gguf_ && !gguf_->chat_template.source.empty() ? &gguf_->chat_template : nullptr;
}

void OpenedCheckpoint::set_stopping(GenerationOptions& g) const {
  if (gguf_) {
    g.eos = config().eos_ids;  // run.c's BOS rule stays, as llama.cpp's cases stop at EOS or BOS
    return;
  }
  if (!hf_) return;  // run.c's rule: the defaults
  g.eos = config().eos_ids;
  g.stop_at_bos = false;
}

}  // namespace llama::cli
