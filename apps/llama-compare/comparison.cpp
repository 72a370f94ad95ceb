// Runs the baseline and every other backend over one token stream and
// measures their logit differences and free-running divergence.
#include "comparison.hpp"

#include <algorithm>

#include "llama/error.hpp"
#include "llama/sampler.hpp"
#include "logit_diff.hpp"

namespace llama::compare {
namespace {

GenerationResult generate_with(InferenceBackend& backend, const Model& model,
                               const Tokenizer& tokenizer, const CompareSettings& s) {
  backend.prepare(model);
  Sampler sampler(model.config.vocab_size, s.temperature, s.top_p, s.seed);
  GenerationOptions g;
  g.prompt = s.prompt;
  g.steps = s.steps;
  g.eos = s.eos;
  g.stop_at_bos = s.stop_at_bos;
  return generate(backend, model.config, tokenizer, sampler, g);
}

std::vector<int32_t> stream_of(const GenerationResult& r) {
  std::vector<int32_t> stream = r.prompt_tokens;
  stream.insert(stream.end(), r.generated_tokens.begin(), r.generated_tokens.end());
  return stream;
}

std::optional<int64_t> first_difference(const std::vector<int32_t>& a,
                                        const std::vector<int32_t>& b) {
  const auto [ia, ib] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  if (ia == a.end() && ib == b.end()) return std::nullopt;
  return static_cast<int64_t>(ia - a.begin());
}

void record(BackendComparison& c, const LogitDiff& d, int64_t pos) {
  if (d.max_abs > c.max_abs) {
    c.max_abs = d.max_abs;
    c.max_abs_position = pos;
    c.max_abs_token = d.abs_index;
  }
  if (d.max_rel > c.max_rel) {
    c.max_rel = d.max_rel;
    c.max_rel_position = pos;
  }
  if (!d.same_argmax) ++c.argmax_mismatches;
}

void check_size(const InferenceBackend& b, std::span<const float> logits, size_t expected) {
  if (logits.size() != expected) {
    throw Error(b.name() + " returned " + std::to_string(logits.size()) + " logits, expected " +
                std::to_string(expected));
  }
}

}  // namespace

bool Comparison::ok(double tolerance) const {
  return std::all_of(backends.begin(), backends.end(),
                     [&](const BackendComparison& b) { return b.ok(tolerance); });
}

Comparison compare_backends(std::span<InferenceBackend* const> backends, const Model& model,
                            const Tokenizer& tokenizer, const CompareSettings& settings) {
  if (backends.size() < 2) throw Error("comparing needs at least two backends");
  InferenceBackend& base = *backends[0];
  const auto vocab = static_cast<size_t>(model.config.vocab_size);

  // 1. The baseline generates the stream every backend is then fed.
  const GenerationResult baseline = generate_with(base, model, tokenizer, settings);
  Comparison out;
  out.baseline = base.name();
  out.stream = stream_of(baseline);
  out.prompt_tokens = static_cast<int64_t>(baseline.prompt_tokens.size());
  out.positions = baseline.prompt_positions + baseline.decode_positions;
  out.stop_reason = baseline.stop_reason;

  // 2. Each other backend generates freely with the same sampler settings.
  for (size_t b = 1; b < backends.size(); ++b) {
    BackendComparison c;
    c.backend = backends[b]->name();
    c.stream = stream_of(generate_with(*backends[b], model, tokenizer, settings));
    c.first_divergence = first_difference(c.stream, out.stream);
    out.backends.push_back(std::move(c));
  }

  // 3. Every backend is fed the baseline's stream in lockstep, the prompt as
  // one batch as generate does, and compared position by position.
  for (InferenceBackend* b : backends) b->prepare(model);
  const int64_t n_batch = std::min(out.prompt_tokens, out.positions);
  const std::span<const int32_t> prompt(out.stream.data(), static_cast<size_t>(n_batch));
  const auto base_batch = base.forward_batch(prompt, 0, /*all_logits=*/true);
  check_size(base, base_batch, prompt.size() * vocab);
  std::vector<float> want(base_batch.begin(), base_batch.end());  // f32 [n_batch, vocab]
  for (size_t b = 1; b < backends.size(); ++b) {
    const auto got = backends[b]->forward_batch(prompt, 0, /*all_logits=*/true);
    check_size(*backends[b], got, want.size());
    for (int64_t pos = 0; pos < n_batch; ++pos) {
      const size_t at = static_cast<size_t>(pos) * vocab;
      record(out.backends[b - 1],
             diff_logits(got.subspan(at, vocab), std::span(want).subspan(at, vocab)), pos);
    }
  }
  for (int64_t pos = n_batch; pos < out.positions; ++pos) {
    const int32_t token = out.stream[static_cast<size_t>(pos)];
    const auto base_logits = base.forward(token, pos);
    check_size(base, base_logits, vocab);
    want.assign(base_logits.begin(), base_logits.end());  // f32 [vocab]
    for (size_t b = 1; b < backends.size(); ++b) {
      const auto got = backends[b]->forward(token, pos);
      check_size(*backends[b], got, vocab);
      record(out.backends[b - 1], diff_logits(got, want), pos);
    }
  }
  return out;
}

}  // namespace llama::compare
