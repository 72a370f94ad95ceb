// The KV cache: its element type, who chose it, and the storage backends
// share. f32 is run.c's and transformers' cache; f16 is llama.cpp's default
// (`-ctk/-ctv f16`): keys and values stored as IEEE half (round to nearest
// even), half the memory, and attention with ggml's rounding points
// (kernels/steps/f16_cache_attention.hpp). A model's format picks the default (Model::
// kv_cache: GGUF files f16, llama2.c and Hugging Face files f32), a user may
// override it (BackendOptions::kv_cache, `--kv-cache f32|f16`).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "llama/config.hpp"
#include "llama/model.hpp"
#include "llama/uninitialized_array.hpp"

namespace llama {

// What a backend is asked for: the model's default, or one dtype.
enum class KvCacheOption : uint8_t { model_default, f32, f16 };

const char* to_string(KvCacheOption o);  // "default", "f32", "f16"
// "f32", "f16" or "default"; throws Error naming `what` (a flag, say) otherwise.
KvCacheOption parse_kv_cache(const std::string& text, const std::string& what);

// The dtype a backend runs and why, for describe() and --explain.
struct KvChoice {
  KvDType dtype = KvDType::f32;
  std::string why;  // "the GGUF default (llama.cpp's -ctk/-ctv f16)", "asked for (--kv-cache)"
};
KvChoice resolve_kv_cache(KvCacheOption option, const Model& model);
// "KV cache: f16 (the GGUF default ...): N bytes, ..." for describe().
std::string describe_kv_cache(const KvChoice& kv, int64_t bytes);

// Keys and values of every layer and position: dtype [n_layers, seq_len,
// kv_dim] each, written before read (a position is stored before attention
// reads it; a rewind overwrites). The f32 rows are handed out as float* so a
// backend can write products straight into them; f16 rows are stored from
// f32 rows (store()).
class KvCache {
 public:
  KvCache() = default;
  KvCache(const Config& c, KvDType dtype);

  KvDType dtype() const { return dtype_; }
  int64_t bytes() const;  // keys and values
  int64_t kv_dim() const { return kv_dim_; }

  // f32 only: the row of (layer, pos), kv_dim floats; rows of a layer are
  // kv_dim apart.
  float* keys_f32(int64_t layer, int64_t pos);
  float* values_f32(int64_t layer, int64_t pos);
  // f16 only: the same rows as IEEE half bits.
  const uint16_t* keys_f16(int64_t layer, int64_t pos) const;
  const uint16_t* values_f16(int64_t layer, int64_t pos) const;
  // Stores n positions' rows from pos on (f32 [n, kv_dim] with row stride ld),
  // rounded to the cache's dtype (f32: copied).
  void store(int64_t layer, int64_t pos, int64_t n, const float* k, const float* v, int64_t ld);

 private:
  size_t offset(int64_t layer, int64_t pos) const;

  KvDType dtype_ = KvDType::f32;
  int64_t seq_len_ = 0, kv_dim_ = 0;
  UninitializedArray<float> keys_, values_;         // f32 [n_layers, seq_len, kv_dim]
  UninitializedArray<uint16_t> keys16_, values16_;  // f16 [n_layers, seq_len, kv_dim]
};

}  // namespace llama
