// ReferenceBackend: the forward pass, registered as "reference".
#include "reference_backend.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "llama/checked_math.hpp"
#include "llama/error.hpp"
#include "llama/kernels/numbers/dequantize.hpp"
#include "llama/kernels/numbers/half.hpp"
#include "llama/kernels/steps/f16_cache_attention.hpp"
#include "llama/kernels/steps/run_c.hpp"
#include "llama/kernels/steps/runq_c.hpp"
#include "llama/memory_budget.hpp"
#include "llama/registry.hpp"

namespace llama::reference {
namespace {

using Vec = std::vector<float>;

const BackendRegistrar kRegistrar{
    "reference", "plain loops accumulating in double, single-threaded; the conformance oracle",
    [](const BackendOptions& o) { return std::make_unique<ReferenceBackend>(o); }};

}  // namespace

DTypeSet ReferenceBackend::supported_dtypes() const { return core_kernel_dtypes(); }

ReferenceBackend::Matrix ReferenceBackend::matrix(const Tensor& t) {
  Matrix m;
  m.tensor = t;
  m.rows = t.rows();
  m.cols = t.cols();
  if (t.dtype == DType::f32) {
    m.f32 = t.f32();
  } else if (t.dtype != DType::bf16 && t.dtype != DType::f16) {
    m.input = input_format(t);
  }
  return m;
}

void ReferenceBackend::prepare(const Model& model) {
  prepared_ = false;  // a prepare that throws half-way leaves no mismatched state usable
  // Refuse before allocating: the run state, then with the widened bf16/f16 norms.
  const Admission admission = admit(model, *this, options_);
  kv_ = admission.kv;
  const Config& c = admission.config;  // seq_len: BackendOptions::context
  const int64_t copies = F32Weights::norm_copy_bytes(model.weights);
  if (copies > 0) {
    require_memory(checked_add(admission.run_state_bytes, copies, "reference"),
                   "the run state and f32 copies of the bf16/f16 norms", available_memory(),
                   model.source);
  }
  config_ = c;
  rope_ = RopeTable(c);
  arithmetic_ = step_arithmetic(model.weights);
  f32_.clear();
  const ModelWeights& w = model.weights;
  embedding_ = w.token_embedding;
  layers_.clear();
  for (const LayerWeights& l : w.layers) {
    layers_.push_back({f32_.view(l.attention_norm), f32_.view(l.ffn_norm), matrix(l.wq),
                       matrix(l.wk), matrix(l.wv), matrix(l.wo), matrix(l.w1), matrix(l.w2),
                       matrix(l.w3)});
  }
  final_norm_ = f32_.view(w.final_norm);
  classifier_ = matrix(w.classifier);
  const auto zeros = [](Vec& v, int64_t n) { v.assign(size_t(n), 0.0f); };
  const int64_t wide = std::max({c.dim, c.q_dim(), c.hidden_dim});
  zeros(x_, c.dim);
  zeros(xb_, std::max(c.dim, c.q_dim()));
  zeros(q_, c.q_dim());
  zeros(att_, c.seq_len);
  zeros(hb_, c.hidden_dim);
  zeros(hb2_, c.hidden_dim);
  zeros(tmp_, c.dim);
  zeros(logits_, c.vocab_size);
  caches_.clear();  // one KV cache per sequence (BackendOptions::sequences)
  for (int32_t i = 0; i < admission.sequences; ++i) caches_.emplace_back(c, kv_.dtype);
  lengths_ = SequenceLengths(admission.sequences, c.seq_len);
  current_ = 0;
  if (kv_.dtype == KvDType::f16)
    zeros(att16_, int64_t(attend_f16_scratch_floats(c.head_size(), c.seq_len, 1)));
  zeros(k_row_, c.kv_dim());
  zeros(v_row_, c.kv_dim());
  zeros(rope_cos_, rope_.pairs());
  zeros(rope_sin_, rope_.pairs());
  xq_.assign(size_t(wide), 0);
  zeros(row_, wide);
  zeros(xq_scales_, wide);
  prepared_ = true;
}

void ReferenceBackend::matmul(std::span<float> out, const Matrix& w, std::span<const float> x) {
  if (w.tensor.dtype == DType::bf16 || w.tensor.dtype == DType::f16) {
    // Each row upcast exactly (in place, never a copy of the matrix), then
    // the f32 path's double sum: the f32 model of the same values, bit for bit.
    const auto cols = size_t(w.cols);
    const std::span<float> row = std::span(row_).first(cols);
    const std::span<const uint16_t> h = w.tensor.u16();
    for (int64_t r = 0; r < w.rows; ++r) {
      const auto src = h.subspan(size_t(r) * cols, cols);
      w.tensor.dtype == DType::bf16 ? bf16_to_f32(src, row) : f16_to_f32(src, row);
      double sum = 0.0;
      for (size_t c = 0; c < cols; ++c) sum += double(row[c]) * double(x[c]);
      out[size_t(r)] = float(sum);
    }
    return;
  }
  if (!w.input.quantized()) {
    if (!w.f32.empty()) {
      for (int64_t r = 0; r < w.rows; ++r) {
        double sum = 0.0;
        for (int64_t c = 0; c < w.cols; ++c) {
          sum += double(w.f32[size_t(r * w.cols + c)]) * double(x[size_t(c)]);
        }
        out[size_t(r)] = float(sum);
      }
      return;
    }
    matvec_rows(out, w.tensor, {x, {}}, 0, w.rows, KernelSet::portable);  // core kernel, f32 input
    return;
  }
  // runq.c: quantize the input per group, then the int8 product.
  const auto n = size_t(w.cols), groups = n / size_t(w.input.group_size);
  const std::span<int8_t> values = std::span(xq_).first(n);
  const std::span<float> scales = std::span(xq_scales_).first(groups);
  quantize_input(w.input, x.first(n), values, scales);
  matvec_rows(out, w.tensor, {{}, Q8View(values, scales, w.input.group_size)}, 0, w.rows,
              KernelSet::portable);
}

void ReferenceBackend::rmsnorm(std::span<float> out, std::span<const float> x,
                               std::span<const float> w) {
  if (arithmetic_ == StepArithmetic::runq_c) {
    q8::rmsnorm(out, x, w, static_cast<float>(config_.norm_eps));
    return;
  }
  const auto n = int64_t(x.size());
  double ss = 0.0;
  for (int64_t i = 0; i < n; ++i) ss += double(x[size_t(i)]) * double(x[size_t(i)]);
  const double scale = 1.0 / std::sqrt(ss / double(n) + config_.norm_eps);
  for (int64_t i = 0; i < n; ++i) {
    out[size_t(i)] = float(double(w[size_t(i)]) * (scale * double(x[size_t(i)])));
  }
}

// Rotates each pair (a, b) of each head (the rope table's layout) by this
// position's angles (RopeTable::angles: f32, as run.c and transformers compute
// them), in double; runq.c's FMAs for Q8_0 models.
void ReferenceBackend::rope(std::span<float> v) {
  if (arithmetic_ == StepArithmetic::runq_c) {
    q8::rope_rotate(v, rope_, rope_cos_, rope_sin_);
    return;
  }
  for (size_t h = 0; h < v.size(); h += size_t(rope_.head_dim())) {
    for (int64_t i = 0; i < rope_.pairs(); ++i) {
      const double c = rope_cos_[size_t(i)], s = rope_sin_[size_t(i)];
      const auto [a, b] = rope_.pair(i);
      const double v0 = v[h + size_t(a)], v1 = v[h + size_t(b)];
      v[h + size_t(a)] = float(v0 * c - v1 * s);
      v[h + size_t(b)] = float(v0 * s + v1 * c);
    }
  }
}

// Each query head attends over positions 0..pos of its kv head; the output
// goes to xb_ [q_dim].
void ReferenceBackend::attention(int64_t l, int64_t pos) {
  const Config& c = config_;
  const int64_t kv_dim = c.kv_dim(), hs = c.head_size();
  for (int64_t h = 0; h < c.n_heads; ++h) {
    const float* qh = q_.data() + h * hs;
    const int64_t kv_off = (h / c.kv_mul()) * hs;
    const float* keys = cache().keys_f32(l, 0) + kv_off;
    const float* vals = cache().values_f32(l, 0) + kv_off;
    if (arithmetic_ == StepArithmetic::runq_c) {
      q8::attend_head({qh, size_t(hs)}, keys, vals, kv_dim, pos + 1, att_,
                      std::span(xb_).subspan(size_t(h * hs), size_t(hs)));
      continue;
    }
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
}

// ggml's f16-cache attention: the core's one definition
// (kernels/steps/f16_cache_attention.hpp: q and p rounded to f16, f32 sums in a fixed
// order) at its portable level, so the oracle and the SIMD backends agree to
// the bit instead of flipping f16 roundings where their sums differ.
void ReferenceBackend::attention_f16(int64_t l, int64_t pos) {
  const Config& c = config_;
  const int64_t kv_dim = c.kv_dim(), hs = c.head_size();
  for (int64_t h = 0; h < c.n_heads; ++h) {
    const int64_t kv_off = (h / c.kv_mul()) * hs;
    attend_queries_f16_at_level(SimdLevel::portable, q_.data() + h * hs, hs, 1, pos, hs,
                                cache().keys_f16(l, 0) + kv_off, cache().values_f16(l, 0) + kv_off,
                                kv_dim, att16_, xb_.data() + h * hs, hs);
  }
}

// hb = silu(hb) * hb2: in double, or runq.c's f32.
void ReferenceBackend::swiglu() {
  if (arithmetic_ == StepArithmetic::runq_c) {
    llama::swiglu(hb_, hb2_);
    return;
  }
  for (size_t i = 0; i < hb_.size(); ++i) {
    const double a = hb_[i];
    hb_[i] = float(a / (1.0 + std::exp(-a)) * double(hb2_[i]));
  }
}

std::span<const float> ReferenceBackend::forward(int32_t token, int64_t pos) {
  if (!prepared_) throw Error("reference: forward called before prepare");
  check_token_position(config_, token, pos);
  current_ = 0;
  const std::span<const float> logits = step(token, pos);
  const SequenceRun ran{0, pos, std::span(&token, 1), RunLogits::last};
  lengths_.apply(std::span(&ran, 1));
  return logits;
}

// Several sequences, one token at a time: each run on its own sequence's cache.
std::span<const float> ReferenceBackend::forward_runs(std::span<const SequenceRun> runs) {
  if (!prepared_) throw Error("reference: forward_runs called before prepare");
  lengths_.check(runs, config_.vocab_size, name());
  const auto vocab = size_t(config_.vocab_size);
  run_logits_.resize(size_t(logit_rows(runs)) * vocab);
  size_t row = 0;
  for (const SequenceRun& r : runs) {
    current_ = r.sequence;
    for (size_t i = 0; i < r.tokens.size(); ++i) {
      const std::span<const float> logits = step(r.tokens[i], r.start_pos + int64_t(i));
      const bool wanted =
          r.logits == RunLogits::all || (r.logits == RunLogits::last && i + 1 == r.tokens.size());
      if (wanted) std::copy(logits.begin(), logits.end(), run_logits_.begin() + (row++) * vocab);
    }
  }
  current_ = 0;
  lengths_.apply(runs);
  return run_logits_;
}

// One token of sequence current_ at `pos`: run.c's forward pass.
std::span<const float> ReferenceBackend::step(int32_t token, int64_t pos) {
  const Config& c = config_;
  const int64_t dim = c.dim, kv_dim = c.kv_dim();
  const auto span = [](Vec& v, int64_t off, int64_t n) {
    return std::span<float>(v).subspan(size_t(off), size_t(n));
  };
  const std::span<float> xb = span(xb_, 0, dim);         // normed input
  const std::span<float> att = span(xb_, 0, c.q_dim());  // attention output

  // 1. The token's embedding row starts the residual stream; the position's angles.
  embedding_row(embedding_, token, x_);
  rope_.angles(pos, rope_cos_, rope_sin_);

  for (int64_t l = 0; l < c.n_layers; ++l) {
    const Layer& w = layers_[size_t(l)];
    // The new key and value: straight into an f32 cache, or rounded into an f16 one.
    const bool f16 = cache().dtype() == KvDType::f16;
    const std::span<float> k =
        f16 ? span(k_row_, 0, kv_dim) : std::span<float>(cache().keys_f32(l, pos), size_t(kv_dim));
    const std::span<float> v = f16 ? span(v_row_, 0, kv_dim)
                                   : std::span<float>(cache().values_f32(l, pos), size_t(kv_dim));

    // 2. Attention: normalize, project to q, k, v, rotate q and k.
    rmsnorm(xb, x_, w.attention_norm);
    matmul(q_, w.wq, xb);
    matmul(k, w.wk, xb);
    matmul(v, w.wv, xb);
    rope(q_);
    rope(k);

    // 3. Each query head attends over positions 0..pos of its kv head.
    if (f16) {
      cache().store(l, pos, 1, k.data(), v.data(), kv_dim);
      attention_f16(l, pos);
    } else {
      attention(l, pos);
    }

    // 4. Output projection and residual.
    matmul(tmp_, w.wo, att);
    for (int64_t i = 0; i < dim; ++i) x_[size_t(i)] += tmp_[size_t(i)];

    // 5. Feed-forward: w2(silu(w1 x) * w3 x) and residual.
    rmsnorm(xb, x_, w.ffn_norm);
    matmul(hb_, w.w1, xb);
    matmul(hb2_, w.w3, xb);
    swiglu();
    matmul(tmp_, w.w2, hb_);
    for (int64_t i = 0; i < dim; ++i) x_[size_t(i)] += tmp_[size_t(i)];
  }

  // 6. Final norm and classifier.
  rmsnorm(x_, x_, final_norm_);
  matmul(logits_, classifier_, x_);
  return logits_;
}

std::string ReferenceBackend::describe() const {
  std::ostringstream s;
  s << "reference backend: plain loops, double accumulation, 1 thread\n";
  if (!prepared_) return s.str();
  s << "  model: " << config_.to_string() << "\n"
    << "  steps: " << step_kernels(arithmetic_).name << " arithmetic\n"
    << "  " << describe_kv_cache(kv_, cache().bytes() * int64_t(caches_.size()))
    << (kv_.dtype == KvDType::f16 ? " (the core's portable kernel)" : "") << "\n"
    << "  sequences: " << caches_.size() << " (a KV cache each), run one token at a time\n";
  if (classifier_.input.quantized()) {
    s << "  products: " << describe_products(classifier_.tensor, KernelSet::portable)
      << " (runq.c's int8 products)\n";
  } else if (classifier_.f32.empty()) {
    s << "  products: " << to_string(classifier_.tensor.dtype)
      << " weights read in place, each row upcast exactly and summed in double\n";
  } else {
    s << "  products: f32 weights summed in double\n";
  }
  if (f32_.copied_bytes() > 0) {
    s << "  bf16/f16 norms widened to f32 at prepare: " << f32_.copied_bytes() << " bytes\n";
  }
  return s.str();
}

}  // namespace llama::reference
