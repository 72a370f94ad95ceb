// The KV cache's dtype, its choice and its storage (llama/kv_cache.hpp).
#include "llama/kv_cache.hpp"

#include <algorithm>

#include "llama/error.hpp"
#include "llama/kernels/numbers/half.hpp"
#include "llama/model.hpp"

namespace llama {

const char* to_string(KvCacheOption o) {
  switch (o) {
    case KvCacheOption::f32:
      return "f32";
    case KvCacheOption::f16:
      return "f16";
    case KvCacheOption::model_default:
      break;
  }
  return "default";
}

KvCacheOption parse_kv_cache(const std::string& text, const std::string& what) {
  if (text == "f32") return KvCacheOption::f32;
  if (text == "f16") return KvCacheOption::f16;
  if (text == "default") return KvCacheOption::model_default;
  throw Error(what + ": unknown KV cache type '" + text + "' (f32, f16 or default)");
}

KvChoice resolve_kv_cache(KvCacheOption option, const Model& model) {
  if (option == KvCacheOption::f32) return {KvDType::f32, "asked for (--kv-cache f32)"};
  if (option == KvCacheOption::f16) return {KvDType::f16, "asked for (--kv-cache f16)"};
  if (!model.kv_cache_why.empty()) return {model.kv_cache, model.kv_cache_why};
  return {model.kv_cache, model.kv_cache == KvDType::f16
                              ? "the model's default"
                              : "the format's default (run.c and transformers keep f32)"};
}

std::string describe_kv_cache(const KvChoice& kv, int64_t bytes) {
  std::string s = std::string("KV cache: ") + to_string(kv.dtype) + " (" + kv.why + "), " +
                  std::to_string(bytes) + " bytes of keys and values [n_layers, seq_len, kv_dim]";
  if (kv.dtype == KvDType::f16) {
    s += "; attention as ggml's: q and the softmax probabilities rounded to f16, f32 sums";
  }
  return s;
}

KvCache::KvCache(const Config& c, KvDType dtype)
    : dtype_(dtype), seq_len_(c.seq_len), kv_dim_(c.kv_dim()) {
  const auto n = static_cast<size_t>(c.kv_cache_floats() / 2);  // validated: no overflow
  if (dtype == KvDType::f16) {
    keys16_ = UninitializedArray<uint16_t>(n);
    values16_ = UninitializedArray<uint16_t>(n);
  } else {
    keys_ = UninitializedArray<float>(n);
    values_ = UninitializedArray<float>(n);
  }
}

int64_t KvCache::bytes() const {
  const auto n =
      dtype_ == KvDType::f16 ? keys16_.size() + values16_.size() : keys_.size() + values_.size();
  return static_cast<int64_t>(n) * kv_element_bytes(dtype_);
}

size_t KvCache::offset(int64_t layer, int64_t pos) const {
  return static_cast<size_t>((layer * seq_len_ + pos) * kv_dim_);
}

float* KvCache::keys_f32(int64_t layer, int64_t pos) { return keys_.data() + offset(layer, pos); }
float* KvCache::values_f32(int64_t layer, int64_t pos) {
  return values_.data() + offset(layer, pos);
}
const uint16_t* KvCache::keys_f16(int64_t layer, int64_t pos) const {
  return keys16_.data() + offset(layer, pos);
}
const uint16_t* KvCache::values_f16(int64_t layer, int64_t pos) const {
  return values16_.data() + offset(layer, pos);
}

void KvCache::store(int64_t layer, int64_t pos, int64_t n, const float* k, const float* v,
                    int64_t ld) {
  for (int64_t i = 0; i < n; ++i) {
    const size_t at = offset(layer, pos + i);
    if (dtype_ == KvDType::f16) {
      round_to_f16(k + i * ld, keys16_.data() + at, kv_dim_);
      round_to_f16(v + i * ld, values16_.data() + at, kv_dim_);
    } else {
      std::copy_n(k + i * ld, kv_dim_, keys_.data() + at);
      std::copy_n(v + i * ld, kv_dim_, values_.data() + at);
    }
  }
}

}  // namespace llama
