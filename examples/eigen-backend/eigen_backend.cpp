// EigenBackend: prepare (the weights mapped for Eigen, the run state allocated), the
// decode step (forward) and attention over a sequence's KV cache.
#include "eigen_backend.hpp"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <sstream>
#include <thread>

#include "llama/error.hpp"
#include "llama/kernels/steps/f16_cache_attention.hpp"
#include "llama/kernels/steps/run_c.hpp"

namespace eigen_backend {
namespace {

using llama::Error;
using Vector = Eigen::Matrix<float, Eigen::Dynamic, 1>;

int resolve_threads(int requested) {
  if (requested < 0) throw Error("eigen: threads must be >= 1, got " + std::to_string(requested));
  if (requested > 0) return requested;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

Matrix matrix(const llama::Tensor& t) { return {t.f32().data(), t.rows(), t.cols()}; }

Eigen::Map<Vector> vec(std::span<float> v) {
  return {v.data(), static_cast<Eigen::Index>(v.size())};
}

size_t sz(int64_t n) { return static_cast<size_t>(n); }

}  // namespace

EigenBackend::EigenBackend(const llama::BackendOptions& options)
    : threads_(resolve_threads(options.threads)),
      options_(options),
      arena_(std::make_unique<tbb::task_arena>(threads_)) {}

void EigenBackend::prepare(const llama::Model& model) {
  // Refusals first, so a refused model leaves the backend as it was.
  const llama::Admission admission = llama::admit(model, *this, options_);
  prepared_ = false;
  kv_ = admission.kv;
  config_ = admission.config;  // seq_len: BackendOptions::context
  const llama::Config& c = config_;
  rope_ = llama::RopeTable(c);
  eps_ = static_cast<float>(c.norm_eps);

  const llama::ModelWeights& w = model.weights;
  embedding_ = w.token_embedding.f32();
  final_norm_ = w.final_norm.f32();
  classifier_ = matrix(w.classifier);
  layers_.clear();
  for (const llama::LayerWeights& l : w.layers) {
    layers_.push_back({l.attention_norm.f32(), l.ffn_norm.f32(), matrix(l.wq), matrix(l.wk),
                       matrix(l.wv), matrix(l.wo), matrix(l.w1), matrix(l.w2), matrix(l.w3)});
  }

  auto zeros = [](std::vector<float>& v, int64_t n) { v.assign(sz(n), 0.0f); };
  zeros(x_, c.dim);
  zeros(xb_, std::max(c.dim, c.q_dim()));
  zeros(xb2_, c.dim);
  zeros(hb_, c.hidden_dim);
  zeros(hb2_, c.hidden_dim);
  zeros(q_, c.q_dim());
  // f16 cache: the core's kernel's scratch (llama/kernels/attention_f16.hpp).
  scores_per_head_ =
      kv_.dtype == llama::KvDType::f16
          ? static_cast<int64_t>(llama::attend_f16_scratch_floats(c.head_size(), c.seq_len, 1))
          : c.seq_len;
  zeros(scores_, c.n_heads * scores_per_head_);
  zeros(logits_, c.vocab_size);
  caches_.clear();  // one KV cache per sequence (BackendOptions::sequences)
  for (int32_t i = 0; i < admission.sequences; ++i) caches_.emplace_back(c, kv_.dtype);
  lengths_ = llama::SequenceLengths(admission.sequences, c.seq_len);
  if (kv_.dtype == llama::KvDType::f16) zeros(kv_rows_, 2 * c.kv_dim());
  zeros(cos_, rope_.pairs());
  zeros(sin_, rope_.pairs());
  xd_.assign(sz(std::max({c.dim, c.q_dim(), c.hidden_dim})), 0.0);
  prepared_ = true;
}

// key_row, value_row and store_rows: sequence 0's cache (forward, forward_batch).
std::span<float> EigenBackend::key_row(int64_t layer, int64_t pos) {
  const int64_t kv_dim = config_.kv_dim();
  if (kv_.dtype == llama::KvDType::f16) {
    return {kv_rows_.data() + (pos - rows_start_) * kv_dim, sz(kv_dim)};
  }
  return {caches_.front().keys_f32(layer, pos), sz(kv_dim)};
}

std::span<float> EigenBackend::value_row(int64_t layer, int64_t pos) {
  const int64_t kv_dim = config_.kv_dim();
  if (kv_.dtype == llama::KvDType::f16) {
    return {kv_rows_.data() + sz(kv_rows_.size() / 2) + (pos - rows_start_) * kv_dim, sz(kv_dim)};
  }
  return {caches_.front().values_f32(layer, pos), sz(kv_dim)};
}

void EigenBackend::store_rows(int64_t layer, int64_t start_pos, int64_t n) {
  if (kv_.dtype != llama::KvDType::f16) return;  // written in place
  const int64_t kv_dim = config_.kv_dim();
  caches_.front().store(layer, start_pos, n, key_row(layer, start_pos).data(),
                        value_row(layer, start_pos).data(), kv_dim);
}

void EigenBackend::attention(llama::KvCache& cache, int64_t layer, int64_t start_pos, int64_t n,
                             const float* q, float* out) {
  const llama::Config& c = config_;
  const int64_t hs = c.head_size(), q_dim = c.q_dim(), kv_dim = c.kv_dim();
  // Position start_pos + i, query head h: the core's attention of one head (its dot
  // products summed in double, which run.c's reference streams need; over an f16
  // cache ggml's arithmetic, llama/kernels/attention_f16.hpp).
  auto head = [&](int64_t i, int64_t h, std::span<float> scores) {
    const int64_t kv_off = (h / c.kv_mul()) * hs;
    const std::span<const float> qh{q + i * q_dim + h * hs, sz(hs)};
    const std::span<float> o{out + i * q_dim + h * hs, sz(hs)};
    if (cache.dtype() == llama::KvDType::f16) {
      llama::attend_head_f16(qh, cache.keys_f16(layer, 0) + kv_off,
                             cache.values_f16(layer, 0) + kv_off, kv_dim, start_pos + i + 1, scores,
                             o);
      return;
    }
    llama::attend_head(qh, cache.keys_f32(layer, 0) + kv_off, cache.values_f32(layer, 0) + kv_off,
                       kv_dim, start_pos + i + 1, scores, o);
  };
  const bool parallel = threads_ > 1 && n * (start_pos + n) * hs * c.n_heads >= (1 << 15);
  if (n == 1) {  // decode: one score row per head, no allocation
    auto one = [&](int64_t h) {
      head(0, h, std::span(scores_).subspan(sz(h * scores_per_head_), sz(scores_per_head_)));
    };
    if (!parallel) {
      for (int64_t h = 0; h < c.n_heads; ++h) one(h);
    } else {
      arena_->execute([&] { tbb::parallel_for(int64_t{0}, c.n_heads, one); });
    }
    return;
  }
  tbb::enumerable_thread_specific<std::vector<float>> scores(
      [&] { return std::vector<float>(sz(scores_per_head_)); });
  arena_->execute([&] {
    tbb::parallel_for(int64_t{0}, n * c.n_heads,
                      [&](int64_t job) { head(job / c.n_heads, job % c.n_heads, scores.local()); });
  });
}

std::span<const float> EigenBackend::forward(int32_t token, int64_t pos) {
  if (!prepared_) throw Error("eigen: forward called before prepare");
  const llama::Config& c = config_;
  llama::check_token_position(c, token, pos);
  const llama::SequenceRun ran{0, pos, std::span(&token, 1)};  // sequence 0
  lengths_.apply(std::span(&ran, 1));
  const std::span<float> xb = std::span(xb_).first(sz(c.dim));       // normed input
  const std::span<float> att = std::span(xb_).first(sz(c.q_dim()));  // attention output

  std::copy_n(embedding_.begin() + token * c.dim, c.dim, x_.begin());
  rope_.angles(pos, cos_, sin_);
  rows_start_ = pos;
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const Layer& w = layers_[sz(l)];
    llama::rmsnorm(xb, x_, w.attention_norm, eps_);
    const std::span<float> k = key_row(l, pos), v = value_row(l, pos);
    matvec(q_, w.wq, xb);
    matvec(k, w.wk, xb);
    matvec(v, w.wv, xb);
    llama::rope_rotate(q_, rope_, cos_, sin_);
    llama::rope_rotate(k, rope_, cos_, sin_);
    store_rows(l, pos, 1);
    attention(caches_.front(), l, pos, 1, q_.data(), att.data());
    matvec(xb2_, w.wo, att);
    vec(x_) += vec(xb2_);

    llama::rmsnorm(xb, x_, w.ffn_norm, eps_);
    matvec(hb_, w.w1, xb);
    matvec(hb2_, w.w3, xb);
    llama::swiglu(hb_, hb2_);
    matvec(xb, w.w2, hb_);
    vec(x_) += vec(xb);
  }
  llama::rmsnorm(x_, x_, final_norm_, eps_);
  matvec(logits_, classifier_, x_);
  return logits_;
}

std::string EigenBackend::describe() const {
  std::ostringstream s;
  s << "eigen backend: " << threads_ << " thread(s) (oneTBB arena, rows split in 16-row groups)\n"
    << "  Eigen " << EIGEN_WORLD_VERSION << "." << EIGEN_MAJOR_VERSION << "." << EIGEN_MINOR_VERSION
    << ", " << Eigen::SimdInstructionSetsInUse() << "\n"
    << "  decode: matrix-vector products accumulated in double (a fused widen-multiply-add"
       " loop of Eigen arrays, 4 rows at a time); prompt (forward_batch): f32 matrix-matrix"
       " products\n"
    << "  sequences: " << options_.sequences
    << " (a KV cache each); forward_runs puts every run's tokens in one f32 matrix-matrix"
       " product; not batch invariant (Eigen blocks a row's sums by the product's shape)\n"
    << "  weights: f32, read in place from the mapping (other dtypes refused)\n"
    << "  rmsnorm, rotary embedding, attention, swiglu: the core's kernels\n";
  if (prepared_) {
    s << "  model: " << config_.to_string() << "\n"
      << "  " << llama::describe_kv_cache(kv_, caches_.front().bytes())
      << (caches_.size() > 1 ? " per sequence" : "") << "\n";
  }
  return s.str();
}

}  // namespace eigen_backend
