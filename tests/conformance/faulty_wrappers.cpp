// Deliberately broken wrappers, registered under test-only names, that the
// conformance checks and llama-compare must catch: each adds one fault to
// any backend ("test-noisy:blas").
#include <algorithm>
#include <cmath>
#include <memory>

#include "llama/registry.hpp"
#include "llama/weights.hpp"

namespace {

using namespace llama;

enum class Fault {
  noisy,                  // adds noise to one logit
  noisy_with_2_threads,   // noise only when created with 2 threads
  noisy_after_reprepare,  // noise from the second prepare on
  batch_last_only,        // forward_batch ignores all_logits
  no_seq_len_bound,       // positions >= seq_len return stale logits instead of an error
  derailed,               // at position 10 the argmax moves to another token
  f32_only,               // not a fault: claims f32 only, and refuses other dtypes
  accepts_unclaimed,      // claims f32 only, yet prepares a Q8_0 model
  accepts_gguf_blocks,    // claims llama2.c's dtypes and bf16/f16, yet prepares GGUF block models
  noisy_on_16_bit,        // noise only on models with bf16 or f16 weights
  ignores_rewind,         // counts positions itself: a call below the next one appends
};

class FaultyWrapper final : public InferenceBackend {
 public:
  FaultyWrapper(std::unique_ptr<InferenceBackend> inner, Fault fault, int threads)
      : inner_(std::move(inner)), fault_(fault), threads_(threads) {}

  std::string name() const override { return "faulty:" + inner_->name(); }
  DTypeSet supported_dtypes() const override {
    if (fault_ == Fault::f32_only || fault_ == Fault::accepts_unclaimed) return {DType::f32};
    if (fault_ == Fault::accepts_gguf_blocks) {
      return {DType::f32, DType::q8_0, DType::bf16, DType::f16};
    }
    return inner_->supported_dtypes();
  }

  void prepare(const Model& model) override {
    if (fault_ == Fault::f32_only) require_dtypes(model.weights, name(), supported_dtypes());
    inner_->prepare(model);
    seq_len_ = model.config.seq_len;
    ++prepares_;
    next_pos_ = 0;
    const DTypeSet d = model.weights.dtypes();
    sixteen_bit_ = d.contains(DType::bf16) || d.contains(DType::f16);
  }

  std::span<const float> forward(int32_t token, int64_t pos) override {
    if (fault_ == Fault::no_seq_len_bound && pos >= seq_len_ && !logits_.empty()) return logits_;
    // A backend written for positions in order: its own counter, the caller's ignored.
    if (fault_ == Fault::ignores_rewind) pos = next_pos_;
    const auto clean = inner_->forward(token, pos);
    next_pos_ = pos + 1;
    logits_.assign(clean.begin(), clean.end());
    const bool noisy = fault_ == Fault::noisy ||
                       (fault_ == Fault::noisy_with_2_threads && threads_ == 2) ||
                       (fault_ == Fault::noisy_after_reprepare && prepares_ >= 2) ||
                       (fault_ == Fault::noisy_on_16_bit && sixteen_bit_);
    if (noisy) logits_[logits_.size() / 2] += 1e-3f * largest_magnitude();
    if (fault_ == Fault::derailed && pos == 10) {
      const auto best = std::max_element(logits_.begin(), logits_.end());
      logits_[size_t(best - logits_.begin() + 1) % logits_.size()] = *best + 1.0f;
    }
    return logits_;
  }

  std::span<const float> forward_batch(std::span<const int32_t> tokens, int64_t start_pos,
                                       bool all_logits) override {
    if (fault_ == Fault::batch_last_only) return inner_->forward_batch(tokens, start_pos, false);
    return InferenceBackend::forward_batch(tokens, start_pos, all_logits);  // through forward
  }

 private:
  float largest_magnitude() const {
    float m = 0;
    for (float v : logits_) m = std::max(m, std::abs(v));
    return m > 0 ? m : 1.0f;
  }

  std::unique_ptr<InferenceBackend> inner_;
  Fault fault_;
  int threads_;
  int64_t seq_len_ = 0;
  int64_t prepares_ = 0;
  int64_t next_pos_ = 0;  // the position after the last one run
  bool sixteen_bit_ = false;
  std::vector<float> logits_;  // f32 [vocab_size], the last forward's
};

WrapperFactory make_faulty(Fault fault) {
  return [fault](std::unique_ptr<InferenceBackend> inner, const BackendOptions& o) {
    return std::make_unique<FaultyWrapper>(std::move(inner), fault, o.threads);
  };
}

const WrapperRegistrar kNoisy{"test-noisy", "test only: noise on one logit",
                              make_faulty(Fault::noisy)};
const WrapperRegistrar kNoisyThreads{"test-noisy-2-threads", "test only: noise with 2 threads",
                                     make_faulty(Fault::noisy_with_2_threads)};
const WrapperRegistrar kNoisyReprepare{"test-noisy-after-reprepare",
                                       "test only: noise after a second prepare",
                                       make_faulty(Fault::noisy_after_reprepare)};
const WrapperRegistrar kBatchLastOnly{"test-batch-last-only",
                                      "test only: forward_batch ignores all_logits",
                                      make_faulty(Fault::batch_last_only)};
const WrapperRegistrar kNoBound{"test-no-seq-len-bound", "test only: no error past seq_len",
                                make_faulty(Fault::no_seq_len_bound)};
const WrapperRegistrar kF32Only{"test-f32-only", "test only: claims and runs f32 only",
                                make_faulty(Fault::f32_only)};
const WrapperRegistrar kAcceptsUnclaimed{"test-accepts-unclaimed",
                                         "test only: claims f32 only, prepares Q8_0 anyway",
                                         make_faulty(Fault::accepts_unclaimed)};
const WrapperRegistrar kAcceptsGgufBlocks{
    "test-accepts-gguf-blocks", "test only: claims no GGUF block type, prepares them anyway",
    make_faulty(Fault::accepts_gguf_blocks)};
const WrapperRegistrar kDerailed{"test-derailed", "test only: another argmax at position 10",
                                 make_faulty(Fault::derailed)};
const WrapperRegistrar kIgnoresRewind{"test-ignores-rewind",
                                      "test only: positions counted, rewinds ignored",
                                      make_faulty(Fault::ignores_rewind)};
const WrapperRegistrar kNoisy16{"test-noisy-on-16-bit", "test only: noise on bf16/f16 models",
                                make_faulty(Fault::noisy_on_16_bit)};

// Faults of the many-sequence protocol: the wrapper passes sequences() on, so the
// registry accepts it, and breaks forward_runs or the claim.
enum class SequenceFault {
  shared_cache,      // every run on the inner backend's sequence 0: sequences share a cache
  claims_invariant,  // says batch_invariant(), and a row's last bit moves when others share it
  unchecked_runs,    // drops runs of unknown sequences and empty runs instead of refusing
};

class SequenceFaultWrapper final : public InferenceBackend {
 public:
  SequenceFaultWrapper(std::unique_ptr<InferenceBackend> inner, SequenceFault fault)
      : inner_(std::move(inner)), fault_(fault) {}

  std::string name() const override { return "faulty:" + inner_->name(); }
  DTypeSet supported_dtypes() const override { return inner_->supported_dtypes(); }
  void prepare(const Model& model) override { inner_->prepare(model); }
  std::span<const float> forward(int32_t token, int64_t pos) override {
    return inner_->forward(token, pos);
  }
  std::span<const float> forward_batch(std::span<const int32_t> tokens, int64_t start_pos,
                                       bool all_logits) override {
    return inner_->forward_batch(tokens, start_pos, all_logits);
  }
  int32_t sequences() const override { return inner_->sequences(); }
  bool batch_invariant() const override {
    return fault_ == SequenceFault::claims_invariant || inner_->batch_invariant();
  }
  std::span<const float> forward_runs(std::span<const SequenceRun> runs) override {
    if (fault_ == SequenceFault::claims_invariant) {
      const std::span<const float> rows = inner_->forward_runs(runs);
      out_.assign(rows.begin(), rows.end());
      if (runs.size() > 1 && !out_.empty()) out_[0] = std::nextafter(out_[0], INFINITY);
      return out_;
    }
    std::vector<SequenceRun> kept;
    for (const SequenceRun& r : runs) {
      if (r.tokens.empty() || r.sequence < 0 || r.sequence >= sequences()) continue;
      kept.push_back(r);
    }
    if (fault_ == SequenceFault::unchecked_runs) {
      if (kept.empty()) return {};
      return inner_->forward_runs(kept);
    }
    out_.clear();  // shared_cache: one run after another on the single-sequence calls
    for (const SequenceRun& r : kept) {
      const std::span<const float> rows =
          inner_->forward_batch(r.tokens, r.start_pos, r.logits == RunLogits::all);
      if (r.logits != RunLogits::none) out_.insert(out_.end(), rows.begin(), rows.end());
    }
    return out_;
  }

 private:
  std::unique_ptr<InferenceBackend> inner_;
  SequenceFault fault_;
  std::vector<float> out_;
};

WrapperFactory make_sequence_fault(SequenceFault fault) {
  return [fault](std::unique_ptr<InferenceBackend> inner, const BackendOptions&) {
    return std::make_unique<SequenceFaultWrapper>(std::move(inner), fault);
  };
}

const WrapperRegistrar kSharedCache{"test-shared-cache",
                                    "test only: every sequence runs on one cache",
                                    make_sequence_fault(SequenceFault::shared_cache)};
const WrapperRegistrar kClaimsInvariant{"test-claims-invariant",
                                        "test only: claims batch invariance it does not have",
                                        make_sequence_fault(SequenceFault::claims_invariant)};
const WrapperRegistrar kUncheckedRuns{"test-unchecked-runs",
                                      "test only: drops bad runs instead of refusing them",
                                      make_sequence_fault(SequenceFault::unchecked_runs)};

}  // namespace
