// A small, consistent llama GGUF built with the project's writer, and knobs to
// break it one way at a time, for the model-level GGUF tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "llama/formats/gguf_writer.hpp"

namespace llama::test {

struct TinyLlama {
  int64_t dim = 64, hidden = 96, layers = 2, heads = 4, kv_heads = 2, vocab = 300, context = 32;
  llama::gguf::TensorType matrix_type = llama::gguf::TensorType::F32;
  bool tied = false;
  uint32_t alignment = 32;        // general.alignment
  int64_t tokenizer_tokens = -1;  // -1: vocab
  // Called after the consistent file is set up: change keys, add tensors.
  std::function<void(llama::gguf::Writer&)> edit;
  // Skip these keys / tensors.
  std::vector<std::string> drop;
};

std::vector<std::byte> tiny_llama_gguf(const TinyLlama& spec);

}  // namespace llama::test
