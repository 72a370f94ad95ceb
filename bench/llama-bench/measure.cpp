// The timed workloads. Every phase starts from prepare() (untimed) so each
// begins at position 0; decode feeds back the argmax token, as greedy
// generation does, and times each forward call alone.
#include "measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>
#include <vector>

#include "llama/error.hpp"
#include "llama/registry.hpp"
#include "opened_checkpoint.hpp"

namespace llama::bench {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

int32_t argmax(std::span<const float> logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

bool all_finite(std::span<const float> logits) {
  return std::all_of(logits.begin(), logits.end(), [](float v) { return std::isfinite(v); });
}

// Seeded prompt tokens: BOS, then ids spread over the vocabulary (another seed, another
// prompt: the sequences of the parallel workload).
std::vector<int32_t> prompt_tokens(int64_t n, int64_t vocab, uint64_t seed = 0) {
  std::vector<int32_t> tokens(static_cast<size_t>(n));
  uint64_t state = 0x2545f4914f6cdd1dULL + seed * 0x9e3779b97f4a7c15ULL;
  for (size_t i = 0; i < tokens.size(); ++i) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    tokens[i] = i == 0 ? std::min<int32_t>(1, static_cast<int32_t>(vocab - 1))
                       : static_cast<int32_t>(state % static_cast<uint64_t>(vocab));
  }
  return tokens;
}

// The peak resident set of this process image (VmHWM; reset by exec).
int64_t peak_rss_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      std::istringstream in(line.substr(6));
      int64_t kib = 0;
      in >> kib;
      return kib * 1024;
    }
  }
  throw Error("/proc/self/status: no VmHWM line");
}

class Workloads {
 public:
  Workloads(InferenceBackend& backend, const Model& model, const RunSpec& spec)
      : backend_(backend), model_(model), spec_(spec) {
    prompt_ = prompt_tokens(spec.prompt_tokens, model.config.vocab_size);
    fill_ = prompt_tokens(spec.depth, model.config.vocab_size);
  }

  double prefill_ms() {
    backend_.prepare(model_);
    const auto t0 = Clock::now();
    const auto logits = backend_.forward_batch(prompt_, 0);
    const double ms = ms_since(t0);
    finite_ = finite_ && all_finite(logits);
    return ms;
  }

  // Per-token times of decode_tokens forward calls after `depth` positions.
  std::vector<double> decode_ms(int64_t depth) {
    backend_.prepare(model_);
    int32_t token = prompt_[0];
    if (depth > 0) {
      token = argmax(backend_.forward_batch(std::span(fill_).first(static_cast<size_t>(depth)), 0));
    }
    std::vector<double> times;
    times.reserve(static_cast<size_t>(spec_.decode_tokens));
    for (int64_t i = 0; i < spec_.decode_tokens; ++i) {
      const auto t0 = Clock::now();
      const auto logits = backend_.forward(token, depth + i);
      times.push_back(ms_since(t0));
      finite_ = finite_ && all_finite(logits);
      token = argmax(logits);
    }
    return times;
  }

  bool finite() const { return finite_; }

 private:
  InferenceBackend& backend_;
  const Model& model_;
  const RunSpec& spec_;
  std::vector<int32_t> prompt_;
  std::vector<int32_t> fill_;
  bool finite_ = true;
};

}  // namespace

nlohmann::json run_configuration(const RunSpec& spec) {
  const auto t0 = Clock::now();
  const cli::OpenedCheckpoint ck = cli::OpenedCheckpoint::open(spec.checkpoint);
  const Config& c = ck.config();
  if (spec.prompt_tokens > c.seq_len) {
    throw Error(spec.checkpoint + ": --n-prompt " + std::to_string(spec.prompt_tokens) +
                " exceeds seq_len " + std::to_string(c.seq_len));
  }
  if (spec.depth + spec.decode_tokens > c.seq_len) {
    throw Error(spec.checkpoint + ": --depth + --n-gen " +
                std::to_string(spec.depth + spec.decode_tokens) + " exceeds seq_len " +
                std::to_string(c.seq_len));
  }
  BackendOptions options;
  options.threads = spec.threads;
  options.numerics = parse_numerics(spec.numerics, "--numerics");
  options.kv_cache = parse_kv_cache(spec.kv_cache, "--kv-cache");
  auto backend = BackendRegistry::instance().create(spec.backend, options);
  backend->prepare(ck.model());
  const double load_ms = ms_since(t0);

  Workloads w(*backend, ck.model(), spec);
  // The first forward after loading pays for page faults on the mapping.
  const auto t1 = Clock::now();
  (void)backend->forward(1 % static_cast<int32_t>(c.vocab_size), 0);
  const double first_token_ms = ms_since(t1);

  nlohmann::json prefill = nlohmann::json::array(), decode = nlohmann::json::array(),
                 depth = nlohmann::json::array();
  for (int64_t rep = -spec.warmup; rep < spec.repetitions; ++rep) {
    const double p = w.prefill_ms();
    auto d = w.decode_ms(0);
    std::vector<double> dd;
    // The warm-up skips the depth phase: decode is warm already, and filling
    // the cache is the slowest part of a repetition.
    if (spec.depth > 0 && rep >= 0) dd = w.decode_ms(spec.depth);
    if (rep < 0) continue;
    prefill.push_back(p);
    decode.push_back(d);
    if (spec.depth > 0) depth.push_back(dd);
  }
  return {{"backend_name", backend->name()},
          {"load_ms", load_ms},
          {"first_token_ms", first_token_ms},
          {"prefill_ms", prefill},
          {"decode_ms", decode},
          {"depth_ms", depth},
          {"peak_rss_bytes", peak_rss_bytes()},
          {"logits_finite", w.finite()}};
}

nlohmann::json run_parallel(const RunSpec& spec) {
  const auto t0 = Clock::now();
  const cli::OpenedCheckpoint ck = cli::OpenedCheckpoint::open(spec.checkpoint);
  const Config& c = ck.config();
  const int64_t context = spec.prompt_tokens + spec.decode_tokens;
  if (context > c.seq_len) {
    throw Error(spec.checkpoint + ": --n-prompt + --n-gen " + std::to_string(context) +
                " exceeds seq_len " + std::to_string(c.seq_len));
  }
  BackendOptions options;
  options.threads = spec.threads;
  options.numerics = parse_numerics(spec.numerics, "--numerics");
  options.kv_cache = parse_kv_cache(spec.kv_cache, "--kv-cache");
  options.sequences = static_cast<int32_t>(spec.parallel);
  options.context = context;  // what the workload touches, so the caches are all resident
  auto backend = BackendRegistry::instance().create(spec.backend, options);
  backend->prepare(ck.model());
  const double load_ms = ms_since(t0);

  const auto n = static_cast<size_t>(spec.parallel);
  const int64_t vocab = c.vocab_size;
  std::vector<std::vector<int32_t>> prompts;  // one per sequence
  for (size_t s = 0; s < n; ++s) prompts.push_back(prompt_tokens(spec.prompt_tokens, vocab, s));
  std::vector<SequenceRun> runs(n);
  std::vector<int32_t> next(n);  // each sequence's next token
  bool finite = true;
  const auto take = [&](std::span<const float> logits) {
    finite = finite && all_finite(logits);
    for (size_t s = 0; s < n; ++s)
      next[s] = argmax(logits.subspan(s * size_t(vocab), size_t(vocab)));
  };

  nlohmann::json prefill = nlohmann::json::array(), decode = nlohmann::json::array();
  for (int64_t rep = -spec.warmup; rep < spec.repetitions; ++rep) {
    backend->prepare(ck.model());
    for (size_t s = 0; s < n; ++s) runs[s] = {int32_t(s), 0, prompts[s], RunLogits::last};
    auto t = Clock::now();
    take(backend->forward_runs(runs));
    const double p = ms_since(t);
    std::vector<double> steps;
    for (int64_t i = 0; i < spec.decode_tokens; ++i) {
      for (size_t s = 0; s < n; ++s)
        runs[s] = {int32_t(s), spec.prompt_tokens + i, std::span(&next[s], 1), RunLogits::last};
      t = Clock::now();
      const std::span<const float> logits = backend->forward_runs(runs);
      steps.push_back(ms_since(t));
      take(logits);
    }
    if (rep < 0) continue;
    prefill.push_back(p);
    decode.push_back(steps);
  }
  return {{"backend_name", backend->name()},
          {"sequences", spec.parallel},
          {"context", context},
          {"load_ms", load_ms},
          {"prefill_ms", prefill},
          {"decode_ms", decode},
          {"peak_rss_bytes", peak_rss_bytes()},
          {"logits_finite", finite},
          {"batch_invariant", backend->batch_invariant()}};
}

}  // namespace llama::bench
