// What every conformance check uses (check_support.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "conformance_checks.hpp"
#include "llama/backend.hpp"

namespace llama::conformance {

std::unique_ptr<InferenceBackend> make_backend(const std::string& spec, int threads = 0,
                                               KvCacheOption kv = KvCacheOption::model_default);

// Runs `body`, turning any exception into a failure of `r`.
CheckResult guarded(const std::function<void(CheckResult&)>& body);

// Logits of `tokens` at positions start, start + 1, ... one forward each: f32 [n, vocab].
std::vector<float> run_sequential(InferenceBackend& b, std::span<const int32_t> tokens,
                                  int64_t start = 0);

// Fails `r` at the first row (position first_pos + row) where `got` is off
// `want` by more than the tolerance, is not finite, or has the wrong size.
void compare_rows(CheckResult& r, const std::string& what, std::span<const float> got,
                  std::span<const float> want, int64_t vocab, int64_t first_pos = 0,
                  double tolerance = kTolerance);

// Runs `call` and fails `r` unless it throws llama::Error.
void expect_error(CheckResult& r, const std::string& what, const std::function<void()>& call);

}  // namespace llama::conformance
