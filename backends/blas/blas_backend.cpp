// BlasBackend: prepare, the forward pass and registration as "blas".
#include "blas_backend.hpp"

#include <cblas.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <sstream>
#include <thread>

#include "llama/cache_attention.hpp"
#include "llama/checked_math.hpp"
#include "llama/error.hpp"
#include "llama/kernels/numbers/dequantize.hpp"
#include "llama/kernels/steps/f16_cache_attention.hpp"
#include "llama/kernels/steps/run_c.hpp"
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
      numerics_(options.numerics),
      options_(options),
      arena_(std::make_unique<tbb::task_arena>(threads_)) {}

DTypeSet BlasBackend::supported_dtypes() const { return core_kernel_dtypes(); }

BlasBackend::Matrix BlasBackend::matrix(const Tensor& t) {
  Matrix m;
  m.tensor = t;
  m.rows = t.rows();
  m.cols = t.cols();
  if (t.dtype == DType::f32) {
    m.f32 = t.f32();  // sgemv / sgemm in place
  } else {
    m.input = input_format(t, numerics_);  // bf16, f16 and quantized: the core's kernels, in place
  }
  return m;
}

void BlasBackend::prepare(const Model& model) {
  prepared_ = false;
  const Admission admission = admit(model, *this, options_);  // refuse before allocating
  kv_ = admission.kv;
  const Config& c = admission.config;  // seq_len: BackendOptions::context
  const ModelWeights& w = model.weights;
  const int64_t copies = F32Weights::norm_copy_bytes(w);
  if (copies > 0) {
    require_memory(checked_add(admission.run_state_bytes, copies, "blas"),
                   "the run state and f32 copies of the bf16/f16 norms", available_memory(),
                   model.source);
  }
  config_ = c;
  rope_ = RopeTable(c);
  eps_ = static_cast<float>(c.norm_eps);
  steps_ = step_kernels(step_arithmetic(w));
  kernel_ = best_kernel_set();
  f32_.clear();
  embedding_ = w.token_embedding;
  layers_.clear();
  for (const LayerWeights& l : w.layers) {
    layers_.push_back({f32_.view(l.attention_norm), f32_.view(l.ffn_norm), matrix(l.wq),
                       matrix(l.wk), matrix(l.wv), matrix(l.wo), matrix(l.w1), matrix(l.w2),
                       matrix(l.w3)});
  }
  final_norm_ = f32_.view(w.final_norm);
  classifier_ = matrix(w.classifier);
  auto sized = [](std::vector<float>& v, int64_t n) { v.assign(static_cast<size_t>(n), 0.0f); };
  sized(x_, c.dim);
  sized(xb_, std::max(c.dim, c.q_dim()));
  sized(xb2_, c.dim);
  sized(hb_, c.hidden_dim);
  sized(hb2_, c.hidden_dim);
  sized(q_, c.q_dim());
  att_scratch_ = kv_.dtype == KvDType::f16
                     ? int64_t(attend_f16_scratch_floats(c.head_size(), c.seq_len, 1))
                     : c.seq_len;
  sized(att_, c.n_heads * att_scratch_);
  sized(logits_, c.vocab_size);
  caches_.clear();
  for (int32_t i = 0; i < admission.sequences; ++i) caches_.emplace_back(c, kv_.dtype);
  lengths_ = SequenceLengths(admission.sequences, c.seq_len);
  run_scratch_floats_ =
      int64_t(kv_.dtype == KvDType::f16
                  ? attend_f16_scratch_floats(c.head_size(), c.seq_len, kAttendF16Queries)
                  : attend_scratch_floats(c.head_size(), c.seq_len));
  run_scratch_ = UninitializedArray<float>(size_t(threads_) * size_t(run_scratch_floats_));
  sized(k_row_, c.kv_dim());
  sized(v_row_, c.kv_dim());
  sized(rope_cos_, rope_.pairs());
  sized(rope_sin_, rope_.pairs());
  in_.reserve(std::max({c.dim, c.q_dim(), c.hidden_dim}));
  // products(): at most 4 blocks per thread plus one per matrix of a call.
  blocks_.reserve(static_cast<size_t>(8 * threads_ + 8));
  batch_capacity_ = 0;
  prepared_ = true;
}

void BlasBackend::attention(int64_t layer, int64_t pos) {
  const Config& c = config_;
  KvCache& cache_ = caches_.front();
  const int64_t hs = c.head_size();
  auto head = [&](int64_t h) {
    const auto q =
        std::span<const float>(q_).subspan(static_cast<size_t>(h * hs), static_cast<size_t>(hs));
    const auto scratch = std::span(att_).subspan(static_cast<size_t>(h * att_scratch_),
                                                 static_cast<size_t>(att_scratch_));
    const auto out = std::span(xb_).subspan(static_cast<size_t>(h * hs), static_cast<size_t>(hs));
    attend_head_cached(steps_, q, h, c.kv_mul(), cache_, layer, pos + 1, scratch, out);
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
  const SequenceRun ran{0, pos, std::span(&token, 1), RunLogits::last};
  lengths_.apply(std::span(&ran, 1));
  openblas_set_threads(1);  // threads are ours: see blas_products.cpp
  const int64_t dim = c.dim, kv_dim = c.kv_dim();
  KvCache& cache_ = caches_.front();
  const auto sz = [](int64_t n) { return static_cast<size_t>(n); };
  const std::span<float> xb = std::span(xb_).first(sz(dim));         // normed input
  const std::span<float> att = std::span(xb_).first(sz(c.q_dim()));  // attention output

  embedding_row(embedding_, token, x_);
  rope_.angles(pos, rope_cos_, rope_sin_);

  for (int64_t l = 0; l < c.n_layers; ++l) {
    const Layer& w = layers_[sz(l)];
    steps_.rmsnorm(xb, x_, w.attention_norm, eps_);

    // The new key and value: straight into an f32 cache, or rounded into an f16 one.
    const bool f16 = cache_.dtype() == KvDType::f16;
    std::span<float> k(f16 ? k_row_.data() : cache_.keys_f32(l, pos), sz(kv_dim));
    std::span<float> v(f16 ? v_row_.data() : cache_.values_f32(l, pos), sz(kv_dim));
    in_.set(xb);  // quantized once for wq, wk and wv when they want it
    products({{q_, &w.wq}, {k, &w.wk}, {v, &w.wv}}, in_);
    steps_.rope_rotate(q_, rope_, rope_cos_, rope_sin_);
    steps_.rope_rotate(k, rope_, rope_cos_, rope_sin_);
    if (f16) cache_.store(l, pos, 1, k.data(), v.data(), kv_dim);

    attention(l, pos);
    in_.set(att);
    product(xb2_, w.wo, in_);
    for (int64_t i = 0; i < dim; ++i) x_[sz(i)] += xb2_[sz(i)];

    steps_.rmsnorm(xb, x_, w.ffn_norm, eps_);
    in_.set(xb);
    products({{hb_, &w.w1}, {hb2_, &w.w3}}, in_);
    swiglu(hb_, hb2_);
    in_.set(hb_);
    product(xb, w.w2, in_);
    for (int64_t i = 0; i < dim; ++i) x_[sz(i)] += xb[sz(i)];
  }
  steps_.rmsnorm(x_, x_, final_norm_, eps_);
  in_.set(x_);
  product(logits_, classifier_, in_);
  return logits_;
}

std::string BlasBackend::describe() const {
  std::ostringstream s;
  s << "blas backend: " << threads_ << " thread(s)\n"
    << "  BLAS: " << openblas_description() << "\n"
    << "  per layer: rmsnorm, products wq/wk/wv, rope, attention (oneTBB over heads),"
       " product wo, residual, rmsnorm, products w1/w3, swiglu, product w2, residual\n"
    << "  final: rmsnorm, classifier product\n";
  if (!prepared_) return s.str();
  s << "  model: " << config_.to_string() << "\n"
    << "  steps (rmsnorm, rope, attention): " << steps_.name << " arithmetic, "
    << to_string(simd_level()) << " kernels\n"
    << "  " << describe_kv_cache(kv_, caches_.front().bytes())
    << (caches_.size() > 1 ? " per sequence, " + std::to_string(caches_.size()) + " sequences"
                           : std::string())
    << "\n"
    << "  numerics: " << to_string(numerics_)
    << (numerics_ == Numerics::fast ? " (bf16 prefill products may round activations to bf16)\n"
                                    : " (bf16/f16 weights upcast exactly, f32 math)\n");
  const Matrix& first = layers_.empty() ? classifier_ : layers_.front().wq;
  if (first.core() && first.tensor.dtype != classifier_.tensor.dtype) {
    s << "  layer products: " << describe_products(first.tensor, kernel_, numerics_)
      << " (the core's kernels, rows split over threads) in place of sgemv\n";
  }
  if (classifier_.core()) {
    s << "  products: " << describe_products(classifier_.tensor, kernel_, numerics_)
      << " (the core's kernels, rows split over threads) in place of sgemv\n";
  } else {
    s << "  products: f32 sgemv / sgemm, weights read in place from the mapping"
      << (numerics_ == Numerics::exact
              ? "; forward_runs: the core's f32 GEMM (a row's sums whatever the batch)\n"
              : "\n");
  }
  if (f32_.copied_bytes() > 0) {
    s << "  bf16/f16 norms widened to f32 at prepare: " << f32_.copied_bytes() << " bytes\n";
  }
  return s.str();
}

}  // namespace llama::blas
