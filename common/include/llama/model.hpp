// What a backend is given: the configuration and weights of one model, whatever
// the file format it came from.
#pragma once

#include <cstdint>
#include <string>

#include "llama/config.hpp"
#include "llama/weights.hpp"

namespace llama {

enum class KvDType : uint8_t { f32, f16 };
inline const char* to_string(KvDType d) { return d == KvDType::f16 ? "f16" : "f32"; }
// Bytes per cached element.
inline int64_t kv_element_bytes(KvDType d) { return d == KvDType::f16 ? 2 : 4; }

struct Model {
  std::string source;  // the file or directory it came from, for messages
  Config config;
  ModelWeights weights;  // typed tensor views, one set per layer
  // The KV cache the format's reference runs it with, and why (empty: "the
  // format's default"): f16 for GGUF files (llama.cpp's -ctk/-ctv f16), f32
  // for llama2.c and Hugging Face files. BackendOptions::kv_cache overrides it.
  KvDType kv_cache = KvDType::f32;
  std::string kv_cache_why;
};

}  // namespace llama
