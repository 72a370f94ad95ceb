// The checkpoint behind an app's -c, whatever its format: a llama2.c file, a
// Hugging Face directory / .safetensors (through open_hf_model) or a GGUF
// (which carries its own tokenizer and chat template), with what generation
// needs to know of the format (its stopping rule) and the descriptions
// --verify-checkpoint and --explain print. The apps' single dispatch point
// until the core's open_model takes it over.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "llama/chat/model_template.hpp"
#include "llama/formats/gguf_model.hpp"
#include "llama/formats/hf_model.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/generate.hpp"
#include "llama/model.hpp"
#include "llama/tokenizers/tokenizer.hpp"

namespace llama::cli {

class OpenedCheckpoint {
 public:
  // `context_cap`: HF models' KV cache positions when the run asks for none
  // (their context, capped); llama2.c files keep their seq_len; GGUF files
  // take min(context_length, gguf::kDefaultContext). A file starting with
  // GGUF's magic opens as GGUF.
  static OpenedCheckpoint open(const std::string& path, int64_t context_cap = kDefaultHfContextCap);

  // What the backends run.
  const Model& model() const;
  const Config& config() const { return model().config; }
  const Checkpoint* llama2c() const { return llama2c_ ? &*llama2c_ : nullptr; }
  const HfModel* hf() const { return hf_ ? &*hf_ : nullptr; }
  const gguf::GgufModel* gguf() const { return gguf_ ? &*gguf_ : nullptr; }
  // Bytes the weights occupy as stored (what a forward pass reads).
  int64_t weight_bytes() const;

  // The tokenizer for -k `tokenizer_flag`: that file when given; else a GGUF's
  // own (Error when it has none), or the one beside the checkpoint.
  std::shared_ptr<const Tokenizer> tokenizer(const std::string& tokenizer_flag) const;
  // The checkpoint's own chat template (a GGUF's tokenizer.chat_template), or nullptr.
  const chat::ModelChatTemplate* chat_template() const;

  // The format's stopping rule: a Hugging Face model stops at any of its EOS
  // ids (config.json, generation_config.json) and has no BOS rule, as
  // transformers' generate; a GGUF stops at its EOS (and EOT) ids as llama.cpp
  // does, and at run.c's sampled BOS; a llama2.c file keeps only run.c's stop at BOS.
  void set_stopping(GenerationOptions& g) const;

 private:
  std::string path_;  // -c as given
  std::optional<Checkpoint> llama2c_;
  std::optional<HfModel> hf_;
  std::optional<gguf::GgufModel> gguf_;  // views of the mapping: what the backends run
};

}  // namespace llama::cli
