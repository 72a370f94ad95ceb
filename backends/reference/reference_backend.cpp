// ReferenceBackend: the forward pass, registered as "reference".
#include "reference_backend.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "llama/error.hpp"
#include "llama/memory_budget.hpp"
#include "llama/registry.hpp"

namespace llama::reference {
namespace {

using Vec = std::vector<float>;

// out[rows] = W[rows, cols] x[cols], summed in double.
void matvec(float* out, std::span<const float> w, const float* x, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0.0;
    for (int64_t c = 0; c < cols; ++c) sum += double(w[size_t(r * cols + c)]) * double(x[c]);
    out[r] = float(sum);
  }
}

void rmsnorm(float* out, const float* x, std::span<const float> w, int64_t n, double eps) {
  double ss = 0.0;
  for (int64_t i = 0; i < n; ++i) ss += double(x[i]) * double(x[i]);
  const double scale = 1.0 / std::sqrt(ss / double(n) + eps);
  for (int64_t i = 0; i < n; ++i) out[i] = float(double(w[size_t(i)]) * (scale * double(x[i])));
}

// Rotates each pair (a, b) of each head of `v` (the rope table's layout) by the
// angles cos_v, sin_v (RopeTable::angles: f32, as run.c and transformers
// compute them), in double.
void rope(float* v, int64_t n, const RopeTable& table, const Vec& cos_v, const Vec& sin_v) {
  for (int64_t h = 0; h < n; h += table.head_dim()) {
    for (int64_t i = 0; i < table.pairs(); ++i) {
      const double c = cos_v[size_t(i)], s = sin_v[size_t(i)];
      const auto [a, b] = table.pair(i);
      const double v0 = v[h + a], v1 = v[h + b];
      v[h + a] = float(v0 * c - v1 * s);
      v[h + b] = float(v0 * s + v1 * c);
    }
  }
}

const BackendRegistrar kRegistrar{
    "reference", "plain loops accumulating in double, single-threaded; the conformance oracle",
    [](const BackendOptions&) { return std::make_unique<ReferenceBackend>(); }};

}  // namespace

void ReferenceBackend::prepare(const Model& model) {
  prepared_ = false;  // a prepare that throws half-way leaves no mismatched state usable
  require_dtypes(model.weights, name(), supported_dtypes());
  require_run_state_memory(model);  // refuse before allocating
  config_ = model.config;
  rope_ = RopeTable(config_);
  weights_ = to_per_layer(model.legacy_weights, config_);
  const Config& c = config_;
  auto zeros = [](Vec& v, int64_t n) { v.assign(size_t(n), 0.0f); };
  zeros(x_, c.dim);
  zeros(xb_, std::max(c.dim, c.q_dim()));
  zeros(q_, c.q_dim());
  zeros(att_, c.seq_len);
  zeros(hb_, c.hidden_dim);
  zeros(hb2_, c.hidden_dim);
  zeros(tmp_, c.dim);
  zeros(logits_, c.vocab_size);
  zeros(key_cache_, c.kv_cache_floats() / 2);
  zeros(val_cache_, c.kv_cache_floats() / 2);
  zeros(rope_cos_, rope_.pairs());
  zeros(rope_sin_, rope_.pairs());
  if (weights_.format == WeightFormat::q8_0) {
    xq_.resize(c.dim, weights_.group_size);
    aq_.resize(c.q_dim(), weights_.group_size);
    hq_.resize(c.hidden_dim, weights_.group_size);
  }
  prepared_ = true;
}

std::span<const float> ReferenceBackend::forward(int32_t token, int64_t pos) {
  if (!prepared_) throw Error("reference: forward called before prepare");
  check_token_position(config_, token, pos);
  if (weights_.format == WeightFormat::q8_0) return forward_q8(token, pos);
  const Config& c = config_;
  const int64_t dim = c.dim, hidden = c.hidden_dim, kv_dim = c.kv_dim(), hs = c.head_size();
  const int64_t q_dim = c.q_dim();

  // 1. The token's embedding starts the residual stream; the position's angles.
  for (int64_t i = 0; i < dim; ++i)
    x_[size_t(i)] = weights_.token_embedding[size_t(token * dim + i)];
  rope_.angles(pos, rope_cos_, rope_sin_);

  for (int64_t l = 0; l < c.n_layers; ++l) {
    const LayerTensors& w = weights_.layers[size_t(l)];
    float* k = key_cache_.data() + (l * c.seq_len + pos) * kv_dim;
    float* v = val_cache_.data() + (l * c.seq_len + pos) * kv_dim;

    // 2. Attention: normalize, project to q, k, v, rotate q and k.
    rmsnorm(xb_.data(), x_.data(), w.rms_att, dim, c.norm_eps);
    matvec(q_.data(), w.wq, xb_.data(), q_dim, dim);
    matvec(k, w.wk, xb_.data(), kv_dim, dim);
    matvec(v, w.wv, xb_.data(), kv_dim, dim);
    rope(q_.data(), q_dim, rope_, rope_cos_, rope_sin_);
    rope(k, kv_dim, rope_, rope_cos_, rope_sin_);

    // 3. Each query head attends over positions 0..pos of its kv head.
    for (int64_t h = 0; h < c.n_heads; ++h) {
      const float* qh = q_.data() + h * hs;
      const int64_t kv_off = (h / c.kv_mul()) * hs;
      const float* keys = key_cache_.data() + l * c.seq_len * kv_dim + kv_off;
      const float* vals = val_cache_.data() + l * c.seq_len * kv_dim + kv_off;
      double max_score = -INFINITY;
      for (int64_t t = 0; t <= pos; ++t) {
        double s = 0.0;
        for (int64_t i = 0; i < hs; ++i) s += double(qh[i]) * double(keys[t * kv_dim + i]);
        att_[size_t(t)] = float(s / std::sqrt(double(hs)));
        max_score = std::max(max_score, double(att_[size_t(t)]));
      }
      double sum = 0.0;
      for (int64_t t = 0; t <= pos; ++t) sum += std::exp(double(att_[size_t(t)]) - max_score);
      for (int64_t i = 0; i < hs; ++i) {
        double acc = 0.0;
        for (int64_t t = 0; t <= pos; ++t) {
          acc += std::exp(double(att_[size_t(t)]) - max_score) / sum * double(vals[t * kv_dim + i]);
        }
        xb_[size_t(h * hs + i)] = float(acc);
      }
    }

    // 4. Output projection and residual.
    matvec(tmp_.data(), w.wo, xb_.data(), dim, q_dim);
    for (int64_t i = 0; i < dim; ++i) x_[size_t(i)] += tmp_[size_t(i)];

    // 5. Feed-forward: w2(silu(w1 x) * w3 x) and residual.
    rmsnorm(xb_.data(), x_.data(), w.rms_ffn, dim, c.norm_eps);
    matvec(hb_.data(), w.w1, xb_.data(), hidden, dim);
    matvec(hb2_.data(), w.w3, xb_.data(), hidden, dim);
    for (int64_t i = 0; i < hidden; ++i) {
      const double a = hb_[size_t(i)];
      hb_[size_t(i)] = float(a / (1.0 + std::exp(-a)) * double(hb2_[size_t(i)]));
    }
    matvec(tmp_.data(), w.w2, hb_.data(), dim, hidden);
    for (int64_t i = 0; i < dim; ++i) x_[size_t(i)] += tmp_[size_t(i)];
  }

  // 6. Final norm and classifier.
  rmsnorm(x_.data(), x_.data(), weights_.rms_final, dim, c.norm_eps);
  matvec(logits_.data(), weights_.wcls, x_.data(), c.vocab_size, dim);
  return logits_;
}

std::string ReferenceBackend::describe() const {
  std::ostringstream s;
  s << "reference backend: plain loops, double accumulation, 1 thread, per-layer layout\n";
  if (prepared_) s << "  model: " << config_.to_string() << "\n";
  if (prepared_ && weights_.format == WeightFormat::q8_0) {
    s << "  Q8_0 weights (group size " << weights_.group_size
      << "): runq.c's int8 products, portable kernel\n";
  }
  return s.str();
}

}  // namespace llama::reference
