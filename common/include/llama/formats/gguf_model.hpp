// A llama GGUF file as the core's Model: the Config from the llama.* and
// tokenizer.ggml.* metadata, every tensor a typed view into the mapping in
// the file's own type (F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K: llama/tensor.hpp
// DType f32, f16, bf16, block_q8_0, q4_0, q4_k, q5_k, q6_k), with the tokenizer and
// the chat template the file carries.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "llama/chat/model_template.hpp"
#include "llama/formats/gguf_file.hpp"
#include "llama/model.hpp"
#include "llama/tokenizers/tokenizer.hpp"

namespace llama::gguf {

// The KV cache a GGUF model gets unless asked for less: llama.cpp's default
// context (Llama 3.1's 131072 positions would be 16 GiB of cache at 8B).
inline constexpr int64_t kDefaultContext = 4096;

// `f` read as a llama model (read_llama's checks), no copy: seq_len =
// min(llama.context_length, kDefaultContext); q/k rows as stored (GGUF's
// llama tensors rotate interleaved pairs, RopeLayout::interleaved); BOS/EOS
// from tokenizer.ggml.{bos,eos,eot}_token_id (a `llama` vocabulary without
// them: SentencePiece's 1 and 2); an absent `output` ties the classifier to
// token_embd. The views keep the mapping alive. Throws Error naming the file.
Model to_model(const File& f);

// What a .gguf file opens into.
struct GgufModel {
  Model model;
  std::shared_ptr<const Tokenizer> tokenizer;  // the embedded one; nullptr when the file has none
  // tokenizer.chat_template with the BOS/EOS pieces it renders; source empty when absent.
  chat::ModelChatTemplate chat_template;
  uint32_t version = 0;    // the GGUF version (2 or 3)
  uint64_t alignment = 0;  // general.alignment (32 when absent)
  uint64_t file_size = 0;  // bytes
  std::string name;        // general.name; empty when absent
};

// GGUF's name of a tensor dtype: "F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_K", "Q5_K", "Q6_K".
const char* gguf_type_name(DType dtype);

// What --explain and --verify-checkpoint say of the file, a line each: the
// file (version, alignment, size, general.name), the config, the tensors by
// type with their bytes, the tokenizer, the chat template.
std::string describe(const GgufModel& g);

// Maps `path` and reads it as above, with its tokenizer checked against the
// vocabulary. Throws Error naming the file.
GgufModel open_model(const std::string& path);

// True when the file at `path` starts with GGUF's magic (false when it cannot be read).
bool is_gguf(const std::string& path);

}  // namespace llama::gguf
