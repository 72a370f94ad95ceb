// A backend for tests of the generation and chat loops: it records every (token,
// position) it is fed, and its logits put the argmax at `next[token]`, else `fallback`,
// so a test scripts the stream and checks exactly what ran where.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "llama/backend.hpp"

namespace llama::test {

class ScriptedBackend : public InferenceBackend {
 public:
  explicit ScriptedBackend(int32_t fallback_token) : fallback(fallback_token) {}

  std::string name() const override { return "scripted"; }
  void prepare(const Model& m) override {
    logits_.assign(static_cast<size_t>(m.config.vocab_size), 0.f);
  }
  std::span<const float> forward(int32_t token, int64_t pos) override {
    fed.emplace_back(token, pos);
    std::fill(logits_.begin(), logits_.end(), 0.f);
    const auto it = next.find(token);
    logits_[static_cast<size_t>(it == next.end() ? fallback : it->second)] = 1.f;
    return logits_;
  }

  std::map<int32_t, int32_t> next;               // token fed -> the argmax after it
  int32_t fallback;                              // the argmax after any other token
  std::vector<std::pair<int32_t, int64_t>> fed;  // every (token, pos), in order

 private:
  std::vector<float> logits_;  // f32 [vocab_size]
};

}  // namespace llama::test
