// Config validation and derived sizes.
#include "llama/config.hpp"

#include <sstream>

#include "llama/checked_math.hpp"
#include "llama/error.hpp"

namespace llama {

Config Config::from_header(const int32_t h[7]) {
  Config c;
  c.dim = h[0];
  c.hidden_dim = h[1];
  c.n_layers = h[2];
  c.n_heads = h[3];
  c.n_kv_heads = h[4];
  c.vocab_size = h[5] < 0 ? -static_cast<int64_t>(h[5]) : h[5];
  c.shared_classifier = h[5] > 0;
  c.seq_len = h[6];
  return c;
}

void Config::validate(const std::string& source) const {
  auto positive = [&](int64_t v, const char* field) {
    if (v <= 0) {
      throw Error(source + ": header field " + field + " is " + std::to_string(v) +
                  ", must be positive");
    }
  };
  positive(dim, "dim");
  positive(hidden_dim, "hidden_dim");
  positive(n_layers, "n_layers");
  positive(n_heads, "n_heads");
  positive(n_kv_heads, "n_kv_heads");
  positive(vocab_size, "vocab_size");
  positive(seq_len, "seq_len");
  if (dim % n_heads != 0) {
    throw Error(source + ": dim " + std::to_string(dim) + " is not divisible by n_heads " +
                std::to_string(n_heads));
  }
  if (n_kv_heads > n_heads || n_heads % n_kv_heads != 0) {
    throw Error(source + ": n_heads " + std::to_string(n_heads) +
                " is not a multiple of n_kv_heads " + std::to_string(n_kv_heads));
  }
  if (head_size() % 2 != 0) {
    throw Error(source + ": head size " + std::to_string(head_size()) +
                " is odd; rotary embedding needs pairs");
  }
  // Every size computed later must fit; computing them here throws if not.
  try {
    (void)kv_cache_floats();
    (void)parameter_count();
  } catch (const Error& e) {
    throw Error(source + ": header " + to_string() + ": " + e.what());  // name the file
  }
  checked_mul(checked_mul(seq_len, n_heads, source + ": attention scores"), 4, source);
}

int64_t Config::kv_cache_floats() const {
  const std::string what = "KV cache";
  return checked_mul(checked_mul(checked_mul(n_layers, seq_len, what), kv_dim(), what), 2, what);
}

int64_t Config::parameter_count() const {
  const std::string what = "parameter count";
  const int64_t per_layer = checked_add(
      checked_add(checked_mul(2, dim, what),  // norms
                  checked_mul(dim,
                              checked_add(checked_mul(2, dim, what),              // wq, wo
                                          checked_mul(2, kv_dim(), what), what),  // wk, wv
                              what),
                  what),
      checked_mul(checked_mul(3, dim, what), hidden_dim, what), what);  // w1, w2, w3
  int64_t total = checked_mul(per_layer, n_layers, what);
  total = checked_add(total, checked_mul(vocab_size, dim, what), what);  // embedding
  total = checked_add(total, dim, what);                                 // final norm
  if (!shared_classifier) total = checked_add(total, checked_mul(vocab_size, dim, what), what);
  return total;
}

std::string Config::to_string() const {
  std::ostringstream s;
  s << "dim=" << dim << " hidden_dim=" << hidden_dim << " n_layers=" << n_layers
    << " n_heads=" << n_heads << " n_kv_heads=" << n_kv_heads << " vocab_size=" << vocab_size
    << " seq_len=" << seq_len << " classifier=" << (shared_classifier ? "shared" : "separate");
  return s.str();
}

}  // namespace llama
