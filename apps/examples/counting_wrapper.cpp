// The counting wrapper ("counting:NAME"): runs any registered backend and
// counts what it is asked to do (prepare, forward, forward_batch and forward_runs
// calls, positions run). An example of a backend wrapper in one short file: it
// forwards every call, so the inner backend keeps its batched paths and sequences.
#include <memory>
#include <string>

#include "llama/registry.hpp"

namespace {

class CountingWrapper final : public llama::InferenceBackend {
 public:
  explicit CountingWrapper(std::unique_ptr<llama::InferenceBackend> inner)
      : inner_(std::move(inner)) {}

  std::string name() const override { return "counting:" + inner_->name(); }
  llama::DTypeSet supported_dtypes() const override { return inner_->supported_dtypes(); }

  void prepare(const llama::Model& model) override {
    ++prepare_calls_;
    inner_->prepare(model);
  }

  std::span<const float> forward(int32_t token, int64_t pos) override {
    ++forward_calls_;
    ++positions_;
    return inner_->forward(token, pos);
  }

  // Forwarded as a batch so the inner backend keeps its batched path.
  std::span<const float> forward_batch(std::span<const int32_t> tokens, int64_t start_pos,
                                       bool all_logits) override {
    ++batch_calls_;
    positions_ += static_cast<int64_t>(tokens.size());
    return inner_->forward_batch(tokens, start_pos, all_logits);
  }

  // Several sequences per call: forwarded as they are, with the count of sequences.
  int32_t sequences() const override { return inner_->sequences(); }
  bool batch_invariant() const override { return inner_->batch_invariant(); }
  std::span<const float> forward_runs(std::span<const llama::SequenceRun> runs) override {
    ++runs_calls_;
    for (const llama::SequenceRun& r : runs) positions_ += static_cast<int64_t>(r.tokens.size());
    return inner_->forward_runs(runs);
  }

  std::string describe() const override { return inner_->describe(); }

  std::string report() const override {
    std::string runs;
    if (runs_calls_ > 0) runs = ", forward_runs " + std::to_string(runs_calls_);
    return name() + ": prepare " + std::to_string(prepare_calls_) + ", forward_batch " +
           std::to_string(batch_calls_) + ", forward " + std::to_string(forward_calls_) + runs +
           ", positions " + std::to_string(positions_) + "\n" + inner_->report();
  }

 private:
  std::unique_ptr<llama::InferenceBackend> inner_;
  int64_t prepare_calls_ = 0;
  int64_t forward_calls_ = 0;
  int64_t batch_calls_ = 0;
  int64_t runs_calls_ = 0;
  int64_t positions_ = 0;  // tokens run, through any of the three
};

const llama::WrapperRegistrar kRegistrar{
    "counting",
    "counts prepare, forward, forward_batch and forward_runs calls and positions of a backend",
    [](std::unique_ptr<llama::InferenceBackend> inner, const llama::BackendOptions&) {
      return std::make_unique<CountingWrapper>(std::move(inner));
    }};

}  // namespace
