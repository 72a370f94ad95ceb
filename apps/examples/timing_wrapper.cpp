// The timing wrapper ("timing:NAME"): runs any registered backend and times
// each call, reporting the median and 99th percentile per phase (prepare, the
// prompt's forward_batch, decoding forward). An example of a backend wrapper
// in one short file.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "llama/registry.hpp"

namespace {

using Clock = std::chrono::steady_clock;

class TimingWrapper final : public llama::InferenceBackend {
 public:
  explicit TimingWrapper(std::unique_ptr<llama::InferenceBackend> inner)
      : inner_(std::move(inner)) {}

  std::string name() const override { return "timing:" + inner_->name(); }
  llama::DTypeSet supported_dtypes() const override { return inner_->supported_dtypes(); }

  void prepare(const llama::Model& model) override {
    const auto start = Clock::now();
    inner_->prepare(model);
    record(prepare_ms_, start);
  }

  std::span<const float> forward(int32_t token, int64_t pos) override {
    const auto start = Clock::now();
    const auto logits = inner_->forward(token, pos);
    record(forward_ms_, start);
    return logits;
  }

  std::span<const float> forward_batch(std::span<const int32_t> tokens, int64_t start_pos,
                                       bool all_logits) override {
    const auto start = Clock::now();
    const auto logits = inner_->forward_batch(tokens, start_pos, all_logits);
    record(batch_ms_, start);
    return logits;
  }

  int32_t sequences() const override { return inner_->sequences(); }
  bool batch_invariant() const override { return inner_->batch_invariant(); }
  std::span<const float> forward_runs(std::span<const llama::SequenceRun> runs) override {
    const auto start = Clock::now();
    const auto logits = inner_->forward_runs(runs);
    record(runs_ms_, start);
    return logits;
  }

  std::string describe() const override { return inner_->describe(); }

  std::string report() const override {
    return phase_line("prepare", prepare_ms_) + phase_line("forward_batch", batch_ms_) +
           phase_line("forward", forward_ms_) + phase_line("forward_runs", runs_ms_) +
           inner_->report();
  }

 private:
  static void record(std::vector<double>& samples, Clock::time_point start) {
    samples.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }

  // Nearest-rank percentile of `sorted` (ascending, not empty).
  static double percentile(const std::vector<double>& sorted, double p) {
    const auto rank =
        static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
    return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
  }

  // One line for a phase; `samples` is a copy, sorted here.
  std::string phase_line(const char* phase, std::vector<double> samples) const {
    if (samples.empty()) return {};
    std::sort(samples.begin(), samples.end());
    std::ostringstream line;
    line << std::fixed << std::setprecision(3) << name() << ": " << phase << ": " << samples.size()
         << " calls, p50 " << percentile(samples, 50) << " ms, p99 " << percentile(samples, 99)
         << " ms\n";
    return line.str();
  }

  std::unique_ptr<llama::InferenceBackend> inner_;
  std::vector<double> prepare_ms_;  // one wall time per call, milliseconds
  std::vector<double> batch_ms_;
  std::vector<double> forward_ms_;
  std::vector<double> runs_ms_;
};

const llama::WrapperRegistrar kRegistrar{
    "timing",
    "times each call of a backend; p50/p99 per phase (prepare, forward_batch, forward, "
    "forward_runs)",
    [](std::unique_ptr<llama::InferenceBackend> inner, const llama::BackendOptions&) {
      return std::make_unique<TimingWrapper>(std::move(inner));
    }};

}  // namespace
