// "test-gate-file:NAME": a wrapper plugin that lets a test outside the process hold a
// server's steps, so the test can act while a reply is known to be unfinished (the
// browser test's stop button) instead of racing a model that generates in milliseconds.
// LLAMA_TEST_GATE names a file: absent, every call runs; holding a number N, the
// wrapper waits before its call once N forward calls have run in all. After each call it
// writes the count so far to LLAMA_TEST_GATE.calls, which the test reads.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "llama/plugins/plugin.hpp"

namespace {

using namespace llama;

// The file's number, or nothing (no file, or not a number yet: a test writes it whole
// through a rename, so a partial number is never seen).
std::optional<int64_t> allowed(const std::string& path) {
  std::ifstream in(path);
  int64_t n = 0;
  if (in >> n) return n;
  return std::nullopt;
}

class GateFile final : public InferenceBackend {
 public:
  GateFile(std::unique_ptr<InferenceBackend> inner, std::string path)
      : inner_(std::move(inner)), path_(std::move(path)) {}
  std::string name() const override { return "test-gate-file:" + inner_->name(); }
  DTypeSet supported_dtypes() const override { return inner_->supported_dtypes(); }
  void prepare(const Model& m) override { inner_->prepare(m); }
  std::span<const float> forward(int32_t token, int64_t pos) override {
    wait();
    return counted(inner_->forward(token, pos));
  }
  std::span<const float> forward_batch(std::span<const int32_t> tokens, int64_t start,
                                       bool all) override {
    wait();
    return counted(inner_->forward_batch(tokens, start, all));
  }
  int32_t sequences() const override { return inner_->sequences(); }
  std::span<const float> forward_runs(std::span<const SequenceRun> runs) override {
    wait();
    return counted(inner_->forward_runs(runs));
  }
  bool batch_invariant() const override { return inner_->batch_invariant(); }
  std::string describe() const override { return inner_->describe(); }
  std::string report() const override { return inner_->report(); }

 private:
  // Polls: the test changes the file from another process, and a test plugin has no
  // need to be cleverer than a short sleep.
  void wait() const {
    for (;;) {
      const std::optional<int64_t> n = allowed(path_);
      if (!n || calls_ < *n) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  std::span<const float> counted(std::span<const float> logits) {
    ++calls_;
    const std::string tmp = path_ + ".calls.tmp";
    std::ofstream(tmp) << calls_ << "\n";
    std::filesystem::rename(tmp, path_ + ".calls");
    return logits;
  }

  std::unique_ptr<InferenceBackend> inner_;
  std::string path_;
  int64_t calls_ = 0;
};

}  // namespace

LLAMA_PLUGIN("test-gate-file", registrar) {
  registrar.add_wrapper(
      "test-gate-file", "test only: holds forward calls past the count in $LLAMA_TEST_GATE",
      [](std::unique_ptr<InferenceBackend> inner, const BackendOptions&) {
        const char* path = std::getenv("LLAMA_TEST_GATE");
        if (path == nullptr || *path == '\0') {
          throw std::runtime_error("test-gate-file: set LLAMA_TEST_GATE to the gate file's path");
        }
        return std::make_unique<GateFile>(std::move(inner), path);
      });
}
