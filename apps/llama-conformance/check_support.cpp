// What every conformance check uses: creating the backend, turning exceptions into
// failures, running positions one by one, comparing rows of logits.
#include "check_support.hpp"

#include "llama/error.hpp"
#include "llama/registry.hpp"
#include "logit_diff.hpp"

namespace llama::conformance {

std::unique_ptr<InferenceBackend> make_backend(const std::string& spec, int threads,
                                               KvCacheOption kv) {
  BackendOptions o;
  o.threads = threads;
  o.kv_cache = kv;
  return BackendRegistry::instance().create(spec, o);
}

// Runs `body`, turning any exception into a failure of `r`.
CheckResult guarded(const std::function<void(CheckResult&)>& body) {
  CheckResult r;
  try {
    body(r);
  } catch (const std::exception& e) {
    r.fail(std::string("threw: ") + e.what());
  }
  return r;
}

// Logits of `tokens` at positions start, start + 1, ... one forward each: f32 [n, vocab].
std::vector<float> run_sequential(InferenceBackend& b, std::span<const int32_t> tokens,
                                  int64_t start) {
  std::vector<float> out;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const auto logits = b.forward(tokens[i], start + static_cast<int64_t>(i));
    out.insert(out.end(), logits.begin(), logits.end());
  }
  return out;
}

// Fails `r` at the first row (position first_pos + row) where `got` is off
// `want` by more than the tolerance, is not finite, or has the wrong size.
void compare_rows(CheckResult& r, const std::string& what, std::span<const float> got,
                  std::span<const float> want, int64_t vocab, int64_t first_pos, double tolerance) {
  if (got.size() != want.size()) {
    r.fail(what + ": " + std::to_string(got.size()) + " logits, expected " +
           std::to_string(want.size()));
    return;
  }
  const auto n = static_cast<size_t>(vocab);
  for (size_t at = 0; at + n <= got.size(); at += n) {
    const auto d = compare::diff_logits(got.subspan(at, n), want.subspan(at, n));
    if (!(d.max_rel <= tolerance)) {
      r.fail(what + ": position " + std::to_string(first_pos + static_cast<int64_t>(at / n)) +
             ": relative difference " + std::to_string(d.max_rel) + " at token " +
             std::to_string(d.abs_index) + " (tolerance " + std::to_string(tolerance) + ")");
      return;
    }
  }
}

// Runs `call` and fails `r` unless it throws llama::Error.
void expect_error(CheckResult& r, const std::string& what, const std::function<void()>& call) {
  try {
    call();
  } catch (const Error&) {
    return;
  } catch (const std::exception& e) {
    r.fail(what + ": threw " + e.what() + " instead of llama::Error");
    return;
  }
  r.fail(what + ": no error");
}

}  // namespace llama::conformance
