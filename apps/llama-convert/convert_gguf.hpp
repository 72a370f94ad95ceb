// llama-convert's GGUF output: a loaded llama2.c checkpoint (any version) as a
// llama GGUF file, with a tokenizer.bin's (or a GGUF input's) vocabulary embedded.
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include "llama/formats/gguf_llama_writer.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"

namespace llama::convert {

// Writes `in` to `out` (named `destination` in errors) as GGUF of `type`;
// `tokenizer` ("" for none) is a tokenizer.bin whose first vocab_size entries
// become tokenizer.ggml.* as convert-llama2c-to-ggml stores them; without
// one, `vocabulary` (a GGUF input's) when it has a value.
gguf::LlamaWriteReport write_gguf(const Checkpoint& in, const std::string& tokenizer,
                                  const std::optional<gguf::Vocabulary>& vocabulary,
                                  gguf::OutType type, std::ostream& out,
                                  const std::string& destination);

}  // namespace llama::convert
