// The tokenizer a GGUF file carries in its metadata (tokenizer.ggml.*), built
// through the core's BPE pipeline (bpe_tokenizer.hpp): `llama` vocabularies
// (SentencePiece: scores, byte fallback) and `gpt2` ones (byte-level BPE:
// merges and a pre-tokenizer regex named by tokenizer.ggml.pre).
#pragma once

#include <memory>

#include "llama/formats/gguf_file.hpp"
#include "llama/tokenizers/tokenizer.hpp"

namespace llama::gguf {

// True when the file holds a tokenizer (tokenizer.ggml.model and tokens).
bool has_tokenizer(const File& f);

// The file's tokenizer; throws Error naming the file and the key for an
// unknown model or pre-tokenizer, arrays of the wrong type or length, or a
// token count other than `vocab_size` (when non-zero).
std::unique_ptr<Tokenizer> open_tokenizer(const File& f, int64_t vocab_size);

}  // namespace llama::gguf
