// Writes a llama model as GGUF (llama-convert's --to gguf-*): llama.cpp's
// metadata keys and tensor names, an embedded vocabulary, and the matrices in
// F32, F16, Q8_0 or Q4_0 through ggml's reference quantizers, so a model
// converted here holds the bytes llama.cpp's own convert + llama-quantize
// would write. Inputs are format-neutral: hyper-parameters, a vocabulary and
// f32 tensors produced one at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "llama/formats/gguf_file.hpp"

namespace llama::gguf {

// tokenizer.ggml.*: a `llama` (SentencePiece: scores) or `gpt2` (byte-level
// BPE: merges, a pre-tokenizer name) vocabulary.
struct Vocabulary {
  std::string model = "llama";
  std::vector<std::string> tokens;
  std::vector<float> scores;   // llama: one per token
  std::vector<int32_t> types;  // llama.cpp token types (1 normal, 2 unknown, 3 control, 6 byte...)
  std::vector<std::string> merges;  // gpt2: "a b" in rank order
  std::string pre;                  // gpt2: tokenizer.ggml.pre
  int32_t bos = -1, eos = -1, unk = -1;
};

// A llama2.c tokenizer.bin's pieces and scores as convert-llama2c-to-ggml
// stores them: ids 0, 1, 2 become <unk>, <s>, </s> (unknown, control,
// control), <0xXX> pieces byte tokens, spaces U+2581.
Vocabulary vocabulary_from_llama2c(std::span<const std::string> pieces,
                                   std::span<const float> scores);

// The vocabulary `f` carries (tokenizer.ggml.*: model, tokens, scores, token
// types, merges, pre-tokenizer, unknown/BOS/EOS ids), to write it into another
// file; nullopt when the file has none. Throws Error naming the file and the
// key for arrays of the wrong type or length.
std::optional<Vocabulary> read_vocabulary(const File& f);

struct LlamaSpec {
  std::string name = "llama";  // general.name
  int64_t dim = 0, hidden_dim = 0, n_layers = 0, n_heads = 0, n_kv_heads = 0, head_dim = 0;
  int64_t vocab_size = 0, context_length = 0;
  double norm_eps = 1e-5, rope_theta = 10000;
  std::optional<Vocabulary> vocabulary;
};

enum class OutType { f32, f16, q8_0, q4_0 };
const char* to_string(OutType type);  // "F32", "F16", "Q8_0", "Q4_0"

struct F32Tensor {
  std::string name;            // GGUF name: token_embd.weight, blk.0.attn_q.weight, ...
  std::vector<int64_t> shape;  // row-major, outermost first
  std::function<std::vector<float>()> values;  // called once, while writing
};

struct WrittenTensor {
  std::string name;
  std::string type;     // "Q8_0", ...
  float max_error = 0;  // largest |stored - original| (0 for F32)
};
struct LlamaWriteReport {
  int64_t bytes = 0;
  std::vector<WrittenTensor> tensors;
};

// Writes `spec` and `tensors` (in the order given, llama's names) to `out`.
// 1-D tensors (norms) stay F32; matrices take `type`, except that for Q4_0
// the classifier (output.weight, or a tied token_embd.weight) is Q8_0, as
// llama-quantize does when Q6_K cannot hold its rows. Throws Error naming
// `destination` for a non-finite value, a matrix whose rows do not hold whole
// blocks, or a failing stream.
LlamaWriteReport write_llama(const LlamaSpec& spec, const std::vector<F32Tensor>& tensors,
                             OutType type, std::ostream& out, const std::string& destination);

}  // namespace llama::gguf
