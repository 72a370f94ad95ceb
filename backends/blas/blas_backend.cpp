// BlasBackend: forward pass and registration as "blas".
#include "blas_backend.hpp"

#include <cblas.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <sstream>
#include <thread>

#include "llama/error.hpp"
#include "llama/kernels/math.hpp"
#include "llama/memory_budget.hpp"
#include "llama/registry.hpp"
#include "openblas_runtime.hpp"

namespace llama::blas {
namespace {

int resolve_threads(int requested) {
  if (requested < 0) throw Error("blas: threads must be >= 1, got " + std::to_string(requested));
  if (requested > 0) return requested;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

const BackendRegistrar kRegistrar{
    "blas",
    "run.c's forward pass on OpenBLAS sgemv, weights read in place (" + openblas_description() +
        ")",
    [](const BackendOptions& o) { return std::make_unique<BlasBackend>(o); }};

}  // namespace

BlasBackend::BlasBackend(const BackendOptions& options)
    : threads_(resolve_threads(options.threads)),
      arena_(std::make_unique<tbb::task_arena>(threads_)) {}

void BlasBackend::prepare(const Model& model) {
  require_dtypes(model.weights, name(), supported_dtypes());
  require_run_state_memory(model);  // refuse before allocating
  config_ = model.config;
  rope_ = RopeTable(config_);
  eps_ = static_cast<float>(config_.norm_eps);
  const bool q8 = model.legacy_weights.format == WeightFormat::q8_0;
  // Q8_0 files interleave layers; per-layer views keep the int8 weights in the mapping.
  weights_ =
      q8 ? to_per_layer(model.legacy_weights, config_) : to_flat(model.legacy_weights, config_);
  const Config& c = config_;
  if (q8) {
    q8_kernel_ = best_q8_kernel();
    xq_.resize(c.dim, weights_.group_size);
    aq_.resize(c.q_dim(), weights_.group_size);
    hq_.resize(c.hidden_dim, weights_.group_size);
  }
  auto sized = [](std::vector<float>& v, int64_t n) { v.assign(static_cast<size_t>(n), 0.0f); };
  sized(x_, c.dim);
  sized(xb_, std::max(c.dim, c.q_dim()));
  sized(xb2_, c.dim);
  sized(hb_, c.hidden_dim);
  sized(hb2_, c.hidden_dim);
  sized(q_, c.q_dim());
  sized(att_, c.n_heads * c.seq_len);
  sized(logits_, c.vocab_size);
  key_cache_ = UninitializedArray<float>(static_cast<size_t>(c.kv_cache_floats() / 2));
  val_cache_ = UninitializedArray<float>(static_cast<size_t>(c.kv_cache_floats() / 2));
  sized(rope_cos_, rope_.pairs());
  sized(rope_sin_, rope_.pairs());
  prepared_ = true;
}

void BlasBackend::attention(int64_t layer, int64_t pos, HeadAttention attend) {
  const Config& c = config_;
  const int64_t hs = c.head_size(), kv_dim = c.kv_dim();
  const size_t layer_off = static_cast<size_t>(layer * c.seq_len * kv_dim);
  auto head = [&](int64_t h) {
    const size_t kv_off = layer_off + static_cast<size_t>((h / c.kv_mul()) * hs);
    attend(
        std::span<const float>(q_).subspan(static_cast<size_t>(h * hs), static_cast<size_t>(hs)),
        key_cache_.data() + kv_off, val_cache_.data() + kv_off, kv_dim, pos + 1,
        std::span(att_).subspan(static_cast<size_t>(h * c.seq_len), static_cast<size_t>(c.seq_len)),
        std::span(xb_).subspan(static_cast<size_t>(h * hs), static_cast<size_t>(hs)));
  };
  // Threads pay off only once the cache is long enough.
  if (threads_ > 1 && (pos + 1) * hs * c.n_heads >= (1 << 15)) {
    arena_->execute([&] { tbb::parallel_for(int64_t{0}, c.n_heads, [&](int64_t h) { head(h); }); });
  } else {
    for (int64_t h = 0; h < c.n_heads; ++h) head(h);
  }
}

std::span<const float> BlasBackend::forward(int32_t token, int64_t pos) {
  if (!prepared_) throw Error("blas: forward called before prepare");
  const Config& c = config_;
  check_token_position(c, token, pos);
  if (weights_.format == WeightFormat::q8_0) return forward_q8(token, pos);
  openblas_set_threads(1);  // threads are ours: see blas_products.cpp
  const int64_t dim = c.dim, kv_dim = c.kv_dim();
  const auto sz = [](int64_t n) { return static_cast<size_t>(n); };
  const std::span<float> xb = std::span(xb_).first(sz(dim));         // normed input
  const std::span<float> att = std::span(xb_).first(sz(c.q_dim()));  // attention output

  std::copy_n(weights_.token_embedding.begin() + sz(token * dim), dim, x_.begin());
  rope_.angles(pos, rope_cos_, rope_sin_);

  for (int64_t l = 0; l < c.n_layers; ++l) {
    const LayerTensors w = weights_.layer(c, l);
    rmsnorm(xb, x_, w.rms_att, eps_);

    const size_t cache_off = sz((l * c.seq_len + pos) * kv_dim);
    std::span<float> k(key_cache_.data() + cache_off, sz(kv_dim));
    std::span<float> v(val_cache_.data() + cache_off, sz(kv_dim));
    matvec(q_, w.wq, xb);
    matvec(k, w.wk, xb);
    matvec(v, w.wv, xb);
    rope_rotate(q_, rope_, rope_cos_, rope_sin_);
    rope_rotate(k, rope_, rope_cos_, rope_sin_);

    attention(l, pos, llama::attend_head);
    matvec(xb2_, w.wo, att);
    for (int64_t i = 0; i < dim; ++i) x_[sz(i)] += xb2_[sz(i)];

    rmsnorm(xb, x_, w.rms_ffn, eps_);
    matvec(hb_, w.w1, xb);
    matvec(hb2_, w.w3, xb);
    swiglu(hb_, hb2_);
    matvec(xb, w.w2, hb_);
    for (int64_t i = 0; i < dim; ++i) x_[sz(i)] += xb[sz(i)];
  }
  rmsnorm(x_, x_, weights_.rms_final, eps_);
  matvec(logits_, weights_.wcls, x_);
  return logits_;
}

std::string BlasBackend::describe() const {
  std::ostringstream s;
  s << "blas backend: " << threads_ << " thread(s)\n"
    << "  BLAS: " << openblas_description() << "\n"
    << "  layout: flat, weights read in place from the mapping\n"
    << "  per layer: rmsnorm, sgemv wq/wk/wv, rope, attention (oneTBB over heads),"
       " sgemv wo, residual, rmsnorm, sgemv w1/w3, swiglu, sgemv w2, residual\n"
    << "  final: rmsnorm, sgemv classifier\n";
  if (prepared_ && weights_.format == WeightFormat::q8_0) {
    s << "  Q8_0 weights (group size " << weights_.group_size
      << "): every product quantizes its input per group and runs int8 dot products"
         " (kernel "
      << to_string(q8_kernel_) << ", rows split over threads) in place of sgemv\n";
  }
  if (prepared_) {
    s << "  model: " << config_.to_string() << "\n"
      << "  KV cache: " << (key_cache_.size() + val_cache_.size()) * sizeof(float)
      << " bytes (f32 [n_layers, seq_len, kv_dim] keys and values)\n";
  }
  return s.str();
}

}  // namespace llama::blas
