// Config validation, derived sizes and the llama2.c header's implied values.
#include "llama/config.hpp"

#include <cmath>
#include <sstream>

#include "llama/checked_math.hpp"
#include "llama/error.hpp"

namespace llama {
namespace {

// The query and key/value widths, overflow-checked.
int64_t checked_q_dim(const Config& c, const std::string& what) {
  return checked_mul(c.n_heads, c.head_dim, what + " (n_heads x head_dim)");
}
int64_t checked_kv_dim(const Config& c, const std::string& what) {
  return checked_mul(c.n_kv_heads, c.head_dim, what + " (n_kv_heads x head_dim)");
}

void check_rope(const Config& c, const std::string& source) {
  auto finite_positive = [&](double v, const char* field) {
    if (!std::isfinite(v) || v <= 0) {
      std::ostringstream s;
      s << source << ": " << field << " is " << v << ", must be a finite number > 0";
      throw Error(s.str());
    }
  };
  finite_positive(c.norm_eps, "norm_eps");
  finite_positive(c.rope_theta, "rope_theta");
  const RopeScaling& r = c.rope_scaling;
  if (r.type == RopeScalingType::none) return;
  finite_positive(r.factor, "rope_scaling factor");
  if (r.type != RopeScalingType::llama3) return;
  finite_positive(r.low_freq_factor, "rope_scaling low_freq_factor");
  finite_positive(r.high_freq_factor, "rope_scaling high_freq_factor");
  if (!(r.high_freq_factor > r.low_freq_factor)) {
    std::ostringstream s;
    s << source << ": rope_scaling high_freq_factor " << r.high_freq_factor
      << " must be greater than low_freq_factor " << r.low_freq_factor
      << " (llama3 interpolates between them)";
    throw Error(s.str());
  }
  if (r.original_max_position_embeddings <= 0) {
    throw Error(source + ": rope_scaling original_max_position_embeddings is " +
                std::to_string(r.original_max_position_embeddings) + ", must be positive");
  }
}

void check_token_ids(const Config& c, const std::string& source) {
  if (c.bos_id < -1 || c.bos_id >= c.vocab_size) {
    throw Error(source + ": bos id " + std::to_string(c.bos_id) + " outside the vocabulary [0, " +
                std::to_string(c.vocab_size) + ")");
  }
  for (const int32_t eos : c.eos_ids) {
    if (eos < 0 || eos >= c.vocab_size) {
      throw Error(source + ": eos id " + std::to_string(eos) + " outside the vocabulary [0, " +
                  std::to_string(c.vocab_size) + ")");
    }
  }
}

}  // namespace

const char* to_string(RopeLayout layout) {
  return layout == RopeLayout::halves ? "halves" : "interleaved";
}

const char* to_string(RopeAngles angles) {
  return angles == RopeAngles::ggml ? "ggml" : "per_pair";
}

const char* to_string(RopeScalingType type) {
  switch (type) {
    case RopeScalingType::linear:
      return "linear";
    case RopeScalingType::llama3:
      return "llama3";
    default:
      return "none";
  }
}

Config Config::from_header(const int32_t h[7]) {
  return llama2c(h[0], h[1], h[2], h[3], h[4], h[5] < 0 ? -static_cast<int64_t>(h[5]) : h[5], h[6],
                 h[5] > 0);
}

Config Config::llama2c(int64_t dim, int64_t hidden_dim, int64_t n_layers, int64_t n_heads,
                       int64_t n_kv_heads, int64_t vocab_size, int64_t seq_len,
                       bool shared_classifier) {
  Config c;
  c.dim = dim;
  c.hidden_dim = hidden_dim;
  c.n_layers = n_layers;
  c.n_heads = n_heads;
  c.n_kv_heads = n_kv_heads;
  c.vocab_size = vocab_size;
  c.shared_classifier = shared_classifier;
  c.seq_len = seq_len;
  c.context_length = c.seq_len;
  // validate() names a dim that n_heads does not divide.
  c.head_dim = c.n_heads > 0 && c.dim % c.n_heads == 0 ? c.dim / c.n_heads : 0;
  // run.c's conventions, for the ids the vocabulary has.
  c.bos_id = c.vocab_size > 1 ? 1 : -1;
  c.eos_ids.clear();
  if (c.vocab_size > 2) c.eos_ids.push_back(2);
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
  if (head_dim <= 0 && dim % n_heads != 0) {
    throw Error(source + ": dim " + std::to_string(dim) + " is not divisible by n_heads " +
                std::to_string(n_heads));
  }
  positive(head_dim, "head_dim");
  positive(context_length, "context_length");
  if (n_kv_heads > n_heads || n_heads % n_kv_heads != 0) {
    throw Error(source + ": n_heads " + std::to_string(n_heads) +
                " is not a multiple of n_kv_heads " + std::to_string(n_kv_heads));
  }
  if (head_dim % 2 != 0) {
    throw Error(source + ": head size " + std::to_string(head_dim) +
                " is odd; rotary embedding needs pairs");
  }
  // Every size computed later must fit; computing them here throws if not.
  try {
    (void)checked_q_dim(*this, "query width");
    (void)checked_kv_dim(*this, "key/value width");
    (void)kv_cache_floats();
    (void)parameter_count();
  } catch (const Error& e) {
    throw Error(source + ": header " + to_string() + ": " + e.what());  // name the file
  }
  checked_mul(checked_mul(seq_len, n_heads, source + ": attention scores"), 4, source);
  check_rope(*this, source);
  check_token_ids(*this, source);
}

int64_t Config::kv_cache_floats() const {
  const std::string what = "KV cache";
  return checked_mul(
      checked_mul(checked_mul(n_layers, seq_len, what), checked_kv_dim(*this, what), what), 2,
      what);
}

int64_t Config::parameter_count() const {
  const std::string what = "parameter count";
  const int64_t q = checked_q_dim(*this, what), kv = checked_kv_dim(*this, what);
  int64_t per_layer = checked_mul(2, dim, what);  // norms
  per_layer =
      checked_add(per_layer, checked_mul(checked_mul(2, q, what), dim, what), what);  // wq, wo
  per_layer =
      checked_add(per_layer, checked_mul(checked_mul(2, kv, what), dim, what), what);  // wk, wv
  per_layer = checked_add(per_layer, checked_mul(checked_mul(3, dim, what), hidden_dim, what),
                          what);  // w1, w2, w3
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
  // What llama2.c files never vary, only when it differs from llama2.c's.
  if (n_heads <= 0 || dim % n_heads != 0 || head_dim != dim / n_heads)
    s << " head_dim=" << head_dim;
  if (context_length != seq_len) s << " context_length=" << context_length;
  if (norm_eps != 1e-5) s << " norm_eps=" << norm_eps;
  if (rope_theta != 10000.0) s << " rope_theta=" << rope_theta;
  const RopeScaling& r = rope_scaling;
  if (r.type == RopeScalingType::linear) s << " rope_scaling=linear(factor " << r.factor << ")";
  if (r.type == RopeScalingType::llama3) {
    s << " rope_scaling=llama3(factor " << r.factor << ", low_freq_factor " << r.low_freq_factor
      << ", high_freq_factor " << r.high_freq_factor << ", original_max_position_embeddings "
      << r.original_max_position_embeddings << ")";
  }
  if (rope_layout != RopeLayout::interleaved) s << " rope_layout=" << llama::to_string(rope_layout);
  if (rope_angles != RopeAngles::per_pair) s << " rope_angles=" << llama::to_string(rope_angles);
  if (bos_id != 1) s << " bos=" << bos_id;
  if (eos_ids != std::vector<int32_t>{2}) {
    s << " eos=";
    for (size_t i = 0; i < eos_ids.size(); ++i) s << (i ? "," : "") << eos_ids[i];
    if (eos_ids.empty()) s << "none";
  }
  return s.str();
}

}  // namespace llama
