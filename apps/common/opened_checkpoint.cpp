// OpenedCheckpoint: -c PATH as a llama2.c file or a Hugging Face checkpoint.
#include "opened_checkpoint.hpp"

namespace llama::cli {

OpenedCheckpoint OpenedCheckpoint::open(const std::string& path, int64_t context_cap) {
  OpenedCheckpoint ck;
  if (looks_like_hf_checkpoint(path)) {
    ck.hf_.emplace(open_hf_model(path, context_cap));
  } else {
    ck.llama2c_.emplace(Checkpoint::open(path));
  }
  return ck;
}

int64_t OpenedCheckpoint::weight_bytes() const {
  return hf_ ? hf_->checkpoint.weight_bytes() : llama2c_->weight_bytes();
}

void OpenedCheckpoint::set_stopping(GenerationOptions& g) const {
  if (!hf_) return;  // run.c's rule: the defaults
  g.eos = config().eos_ids;
  g.stop_at_bos = false;
}

}  // namespace llama::cli
