// The conformance checks: each runs a backend by spec and compares it with the
// reference backend, with itself under other calls, or with run.c's and runq.c's
// streams.
#include "conformance_checks.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>

#include "check_support.hpp"
#include "conformance_data.hpp"
#include "conformance_models.hpp"
#include "conformance_shapes.hpp"
#include "llama/error.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/generate.hpp"
#include "llama/registry.hpp"
#include "llama/sampler.hpp"
#include "llama/tokenizers/llama2c_tokenizer.hpp"
#include "llama/tokenizers/tokenizer.hpp"
#include "logit_diff.hpp"

namespace llama::conformance {
namespace {

// A reference case (fields prompt, temperature, top_p, seed, steps) generated on `spec`.
struct CaseStream {
  std::vector<int32_t> stream;  // prompt tokens (BOS first) then the sampled ones
  bool stopped_at_bos = false;
};
CaseStream generate_case(const ConformanceData& data, const Checkpoint& ck, const nlohmann::json& c,
                         const std::string& spec) {
  // The case's own tokenizer (parity-stories1M.json: tok2048.bin), else Llama 2's.
  const auto tok = open_tokenizer(data.model(c.value("tokenizer", std::string("tokenizer.bin"))),
                                  {.vocab_size = ck.config().vocab_size});
  auto backend = make_backend(spec);
  backend->prepare(ck.model());
  Sampler sampler(ck.config().vocab_size, c["temperature"].get<float>(), c["top_p"].get<float>(),
                  c["seed"].get<uint64_t>());
  GenerationOptions g;
  g.prompt = c["prompt"].get<std::string>();
  g.steps = c["steps"].get<int64_t>();
  const GenerationResult result = generate(*backend, ck.config(), *tok, sampler, g);
  CaseStream out{result.prompt_tokens, result.stop_reason == StopReason::bos};
  out.stream.insert(out.stream.end(), result.generated_tokens.begin(),
                    result.generated_tokens.end());
  return out;
}

}  // namespace

CheckResult check_logits_match_reference(const std::string& spec, const Model& model,
                                         std::span<const int32_t> tokens) {
  return guarded([&](CheckResult& r) {
    auto backend = make_backend(spec);
    auto reference = make_backend("reference");
    backend->prepare(model);
    reference->prepare(model);
    const std::vector<float> want = run_sequential(*reference, tokens);
    const std::vector<float> got = run_sequential(*backend, tokens);
    for (size_t i = 0; i < got.size() && r.ok; ++i) {
      if (!std::isfinite(got[i])) {
        r.fail("logit " + std::to_string(i % size_t(model.config.vocab_size)) + " at position " +
               std::to_string(i / size_t(model.config.vocab_size)) + " is not finite");
      }
    }
    compare_rows(r, spec + " against reference on " + model.source, got, want,
                 model.config.vocab_size);
  });
}

CheckResult check_f16_kv_matches_reference(const std::string& spec, const Model& model,
                                           std::span<const int32_t> tokens) {
  return guarded([&](CheckResult& r) {
    const int64_t vocab = model.config.vocab_size;
    auto reference16 = make_backend("reference", 0, KvCacheOption::f16);
    auto reference32 = make_backend("reference", 0, KvCacheOption::f32);
    auto backend = make_backend(spec, 0, KvCacheOption::f16);
    reference16->prepare(model);
    reference32->prepare(model);
    backend->prepare(model);
    const std::vector<float> want = run_sequential(*reference16, tokens);
    const std::vector<float> f32 = run_sequential(*reference32, tokens);
    const std::vector<float> got = run_sequential(*backend, tokens);
    const std::string what = spec + " (f16 KV cache) against reference on " + model.source;
    compare_rows(r, what, got, want, vocab, 0, kF16KvTolerance);
    const auto batch = backend->forward_batch(tokens, 0, true);
    compare_rows(r, what + ", forward_batch", std::vector<float>(batch.begin(), batch.end()), want,
                 vocab, 0, kF16KvTolerance);
    double d_backend = 0, d_f32 = 0;
    const auto n = static_cast<size_t>(vocab);
    for (size_t at = 0; at + n <= want.size(); at += n) {
      const auto w = std::span<const float>(want).subspan(at, n);
      d_backend = std::max(
          d_backend, compare::diff_logits(std::span<const float>(got).subspan(at, n), w).max_rel);
      d_f32 = std::max(d_f32,
                       compare::diff_logits(std::span<const float>(f32).subspan(at, n), w).max_rel);
    }
    if (r.ok && !(d_backend < d_f32)) {
      r.fail(what + ": relative difference " + std::to_string(d_backend) +
             " is not below the f32 cache's " + std::to_string(d_f32) +
             " (was the f16 cache used?)");
    }
  });
}

CheckResult check_reference_stream(const ConformanceData& data, const std::string& spec,
                                   const nlohmann::json& c) {
  return guarded([&](CheckResult& r) {
    const Checkpoint ck = Checkpoint::open(data.model(c["model"].get<std::string>()));
    const CaseStream run = generate_case(data, ck, c, spec);
    const std::vector<int32_t>& stream = run.stream;
    const auto want = c["stream"].get<std::vector<int32_t>>();
    const auto [got_it, want_it] =
        std::mismatch(stream.begin(), stream.end(), want.begin(), want.end());
    if (got_it != stream.end() || want_it != want.end()) {
      r.fail(c["name"].get<std::string>() + ": stream departs from the recorded one at position " +
             std::to_string(got_it - stream.begin()) + " (" + std::to_string(stream.size()) +
             " tokens, recorded " + std::to_string(want.size()) + ")");
    }
    if (run.stopped_at_bos != c["stopped_at_bos"].get<bool>()) {
      r.fail(c["name"].get<std::string>() + ": stop reason differs from the recorded one");
    }
  });
}

CheckResult check_prepare_twice(const std::string& spec, const Model& first, const Model& second) {
  return guarded([&](CheckResult& r) {
    const auto tokens_first = test_tokens(first.config, std::min<int64_t>(8, first.config.seq_len));
    const auto tokens_second =
        test_tokens(second.config, std::min<int64_t>(8, second.config.seq_len));
    auto fresh = [&](const Model& m, std::span<const int32_t> tokens) {
      auto b = make_backend(spec);
      b->prepare(m);
      return run_sequential(*b, tokens);
    };
    const std::vector<float> want_first = fresh(first, tokens_first);
    const std::vector<float> want_second = fresh(second, tokens_second);

    auto backend = make_backend(spec);
    backend->prepare(first);
    run_sequential(*backend, tokens_first);
    backend->prepare(first);  // starts over: the same logits again
    compare_rows(r, "second prepare, same model", run_sequential(*backend, tokens_first),
                 want_first, first.config.vocab_size);
    backend->prepare(second);  // another shape
    compare_rows(r, "prepare with another model", run_sequential(*backend, tokens_second),
                 want_second, second.config.vocab_size);
    backend->prepare(first);
    compare_rows(r, "prepare back to the first model", run_sequential(*backend, tokens_first),
                 want_first, first.config.vocab_size);
  });
}

CheckResult check_batch_matches_sequential(const std::string& spec, const Model& model) {
  return guarded([&](CheckResult& r) {
    const int64_t vocab = model.config.vocab_size;
    const auto tokens = test_tokens(model.config, std::min<int64_t>(10, model.config.seq_len));
    auto backend = make_backend(spec);
    backend->prepare(model);
    const std::vector<float> sequential = run_sequential(*backend, tokens);
    const std::span<const float> want(sequential);

    backend->prepare(model);
    compare_rows(r, "forward_batch all_logits", backend->forward_batch(tokens, 0, true), want,
                 vocab);
    backend->prepare(model);
    compare_rows(r, "forward_batch last logits", backend->forward_batch(tokens, 0, false),
                 want.last(static_cast<size_t>(vocab)), vocab, int64_t(tokens.size()) - 1);
    backend->prepare(model);
    const size_t split = 3;  // forward for the first positions, then a batch from position 3
    run_sequential(*backend, std::span(tokens).first(split));
    compare_rows(r, "forward_batch after forward",
                 backend->forward_batch(std::span(tokens).subspan(split), int64_t(split), true),
                 want.subspan(split * static_cast<size_t>(vocab)), vocab, int64_t(split));
  });
}

CheckResult check_rewind(const std::string& spec, const Model& model) {
  return guarded([&](CheckResult& r) {
    const Config& c = model.config;
    const int64_t n = std::min<int64_t>(16, c.seq_len), back = n / 2, vocab = c.vocab_size;
    if (n < 2) throw Error("rewind: " + model.source + " has fewer than 2 positions");
    const std::vector<int32_t> a = test_tokens(c, n);
    std::vector<int32_t> b = a;  // a's first `back` tokens, then others
    for (int64_t i = back; i < n; ++i) b[size_t(i)] = int32_t((a[size_t(i)] + 1) % vocab);
    auto fresh = make_backend(spec);
    fresh->prepare(model);
    const std::vector<float> sequential = run_sequential(*fresh, b);  // f32 [n, vocab]
    const std::span<const float> want(sequential);
    auto rows_from = [&](int64_t pos) { return want.subspan(size_t(pos * vocab)); };

    auto backend = make_backend(spec);
    backend->prepare(model);
    run_sequential(*backend, a);
    compare_rows(r,
                 "forward back at position " + std::to_string(back) + " after " +
                     std::to_string(n) + " positions of other tokens",
                 run_sequential(*backend, std::span(b).subspan(size_t(back)), back),
                 rows_from(back), vocab, back);
    run_sequential(*backend, std::span(a).subspan(size_t(back)), back);  // a's tail again
    compare_rows(r, "forward_batch back at position 1",
                 backend->forward_batch(std::span(b).subspan(1), 1, true), rows_from(1), vocab, 1);
    compare_rows(r, "forward again at the last position", backend->forward(b.back(), n - 1),
                 rows_from(n - 1), vocab, n - 1);
    compare_rows(r, "forward_batch back at position 0", backend->forward_batch(b, 0, true), want,
                 vocab);
  });
}

CheckResult check_seq_len_bound(const std::string& spec, const Model& model) {
  return guarded([&](CheckResult& r) {
    const Config& c = model.config;
    const auto tokens = test_tokens(c, c.seq_len);
    auto reference = make_backend("reference");
    reference->prepare(model);
    const std::vector<float> want = run_sequential(*reference, tokens);

    auto backend = make_backend(spec);
    expect_error(r, "forward before prepare", [&] { backend->forward(kBosToken, 0); });
    backend->prepare(model);
    expect_error(r, "token -1", [&] { backend->forward(-1, 0); });
    expect_error(r, "token vocab_size", [&] { backend->forward(int32_t(c.vocab_size), 0); });
    compare_rows(r, "every position up to seq_len - 1 after refused tokens",
                 run_sequential(*backend, tokens), want, c.vocab_size);
    expect_error(r, "forward at seq_len", [&] { backend->forward(kBosToken, c.seq_len); });

    backend->prepare(model);
    const size_t tail = 2;  // the last two positions, then a batch of three crossing seq_len
    const auto head = std::span(tokens).first(tokens.size() - tail);
    run_sequential(*backend, head);
    const std::vector<int32_t> crossing = {tokens[head.size()], tokens[head.size() + 1], kBosToken};
    expect_error(r, "forward_batch crossing seq_len",
                 [&] { backend->forward_batch(crossing, int64_t(head.size()), true); });
    compare_rows(r, "forward_batch up to seq_len after the refused batch",
                 backend->forward_batch(std::span(tokens).last(tail), int64_t(head.size()), true),
                 std::span(want).last(tail * size_t(c.vocab_size)), c.vocab_size,
                 int64_t(head.size()));
  });
}

CheckResult check_threads_agree(const std::string& spec, const Model& model) {
  return guarded([&](CheckResult& r) {
    const auto tokens = test_tokens(model.config, std::min<int64_t>(10, model.config.seq_len));
    auto run = [&](int threads) {
      auto b = make_backend(spec, threads);
      b->prepare(model);
      const auto prompt = b->forward_batch(std::span(tokens).first(4), 0, true);
      std::vector<float> out(prompt.begin(), prompt.end());
      const auto rest = run_sequential(*b, std::span(tokens).subspan(4), 4);
      out.insert(out.end(), rest.begin(), rest.end());
      return out;
    };
    compare_rows(r, "2 threads against 1", run(2), run(1), model.config.vocab_size);
  });
}

CheckResult check_rotation_layouts_agree(const std::string& spec, const Model& model) {
  return guarded([&](CheckResult& r) {
    const Model halves = with_halves_layout(model);
    const auto tokens = test_tokens(model.config, model.config.seq_len);
    auto backend = make_backend(spec);
    backend->prepare(model);
    const std::vector<float> want = run_sequential(*backend, tokens);
    backend->prepare(halves);
    compare_rows(r, spec + " on " + halves.source, run_sequential(*backend, tokens), want,
                 model.config.vocab_size, 0, kLayoutTolerance);
  });
}

CheckResult check_upcast_exact(const std::string& spec, const Model& f32_model, DType dtype) {
  return guarded([&](CheckResult& r) {
    const Config& c = f32_model.config;
    const auto tokens = test_tokens(c, std::min<int64_t>(c.seq_len, 12));
    const std::string what = spec + " on " + f32_model.source + " in " + to_string(dtype);
    const Model typed = with_dtype(f32_model, dtype, 0, /*norms_too=*/true);
    const Model widened = widened_to_f32(typed);  // outlives the backends' use
    auto on_f32 = make_backend(spec);
    auto backend = make_backend(spec);
    on_f32->prepare(widened);
    backend->prepare(typed);
    const std::vector<float> want = run_sequential(*on_f32, tokens);
    compare_rows(r, what + " against the f32 model of the same values",
                 run_sequential(*backend, tokens), want, c.vocab_size, 0, kUpcastTolerance);
    if (!r.ok) return;
    backend->prepare(typed);
    compare_rows(r, what + ", forward_batch, against the f32 model of the same values",
                 backend->forward_batch(tokens, 0, true), want, c.vocab_size, 0, kUpcastTolerance);
  });
}

}  // namespace llama::conformance
