// The test plugin "test-paced": a wrapper that waits 10 ms before each call it passes
// on, so a llama-server test can hold a replica's streams open for seconds (to kill
// it or restart it mid-stream) without loading the CPU. Its answers are the inner
// backend's, bit for bit, and it claims what the inner backend claims.
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "llama/plugins/plugin.hpp"

namespace {

using namespace llama;

constexpr auto kPace = std::chrono::milliseconds(10);

class Paced final : public InferenceBackend {
 public:
  explicit Paced(std::unique_ptr<InferenceBackend> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return "test-paced:" + inner_->name(); }
  DTypeSet supported_dtypes() const override { return inner_->supported_dtypes(); }
  void prepare(const Model& model) override { inner_->prepare(model); }
  std::span<const float> forward(int32_t token, int64_t pos) override {
    std::this_thread::sleep_for(kPace);
    return inner_->forward(token, pos);
  }
  std::span<const float> forward_batch(std::span<const int32_t> tokens, int64_t start,
                                       bool all) override {
    std::this_thread::sleep_for(kPace);
    return inner_->forward_batch(tokens, start, all);
  }
  int32_t sequences() const override { return inner_->sequences(); }
  std::span<const float> forward_runs(std::span<const SequenceRun> runs) override {
    std::this_thread::sleep_for(kPace);
    return inner_->forward_runs(runs);
  }
  bool batch_invariant() const override { return inner_->batch_invariant(); }
  std::string describe() const override { return inner_->describe(); }
  std::string report() const override { return inner_->report(); }

 private:
  std::unique_ptr<InferenceBackend> inner_;
};

}  // namespace

LLAMA_PLUGIN("test-paced", registrar) {
  registrar.add_wrapper("test-paced", "test only: waits 10 ms before each call",
                        [](std::unique_ptr<InferenceBackend> inner, const BackendOptions&) {
                          return std::make_unique<Paced>(std::move(inner));
                        });
}
