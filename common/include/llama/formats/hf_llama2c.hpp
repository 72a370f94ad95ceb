// Conversions between Hugging Face checkpoints and llama2.c files, with
// llama2.c's export.py semantics: q/k rows permuted between rotate_half and
// interleaved order (rotary_rows.hpp), weights widened exactly to f32 for
// llama2.c, rounded to nearest even for a bf16/f16 HF directory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "llama/formats/hf_model.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/formats/safetensors.hpp"

namespace llama {

class Llama2cTokenizer;

// The HF model as a llama2.c version 1 checkpoint in memory (f32, q/k rows
// interleaved, seq_len = max_position_embeddings), for write_checkpoint to
// write in any version. Throws Error "<destination>: a llama2.c checkpoint
// cannot hold this model: <why>" for a head_dim other than dim / n_heads, rope
// scaling, a theta other than 10000 or an epsilon other than 1e-5, which
// llama2.c files cannot say.
Checkpoint hf_to_llama2c(const HfModel& hf, const std::string& destination);
// The same for any Model (a GGUF's too): every tensor dequantized exactly to
// f32, q/k rows permuted only when the model's rope_layout is halves.
Checkpoint model_to_llama2c(const Model& model, const std::string& destination);

struct HfDirectoryReport {
  std::vector<std::string> files;  // written, in order
  int64_t bytes = 0;               // their total size
};

// Writes `in` as a Hugging Face directory into `dir` (which exists): config.json,
// generation_config.json (EOS [1, 2]: llama2.c models end a text with BOS, as
// run.c's stop says), model.safetensors in `dtype` (F32, BF16 or F16), and,
// with a tokenizer, its tokenizer.json and tokenizer_config.json. Throws Error
// naming the file that failed.
HfDirectoryReport write_hf_directory(const Checkpoint& in, const Llama2cTokenizer* tokenizer,
                                     SafetensorsDtype dtype, const std::string& dir);

}  // namespace llama
