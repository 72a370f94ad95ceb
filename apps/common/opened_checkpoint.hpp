// The checkpoint behind an app's -c, whatever its format: a llama2.c file or a
// Hugging Face directory / .safetensors (through open_hf_model), with what
// generation needs to know of the format (its stopping rule) and the
// descriptions --verify-checkpoint and --explain print. The apps' single
// dispatch point until the core's open_model takes it over.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "llama/formats/hf_model.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/generate.hpp"
#include "llama/model.hpp"

namespace llama::cli {

class OpenedCheckpoint {
 public:
  // `context_cap`: HF models' KV cache positions when the run asks for none
  // (their context, capped); llama2.c files keep their seq_len.
  static OpenedCheckpoint open(const std::string& path, int64_t context_cap = kDefaultHfContextCap);

  const Model& model() const { return hf_ ? hf_->model : llama2c_->model(); }
  const Config& config() const { return model().config; }
  const Checkpoint* llama2c() const { return llama2c_ ? &*llama2c_ : nullptr; }
  const HfModel* hf() const { return hf_ ? &*hf_ : nullptr; }
  // Bytes the weights occupy as stored (what a forward pass reads).
  int64_t weight_bytes() const;

  // The format's stopping rule: a Hugging Face model stops at any of its EOS
  // ids (config.json, generation_config.json) and has no BOS rule, as
  // transformers' generate; a llama2.c file keeps run.c's stop at BOS.
  void set_stopping(GenerationOptions& g) const;

 private:
  std::optional<Checkpoint> llama2c_;
  std::optional<HfModel> hf_;
};

}  // namespace llama::cli
