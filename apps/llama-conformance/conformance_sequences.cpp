// The many-sequence checks (plugin protocol 6): any backend, native or behind the
// registry's replay, must give each sequence of a mixed call the logits that sequence
// gets alone; one that claims batch invariance must give them bit for bit.
#include <algorithm>
#include <cstring>
#include <map>
#include <utility>

#include "check_support.hpp"
#include "conformance_checks.hpp"
#include "conformance_models.hpp"
#include "conformance_shapes.hpp"
#include "llama/error.hpp"
#include "llama/memory_budget.hpp"
#include "llama/registry.hpp"
#include "llama/sequence_runs.hpp"
#include "logit_diff.hpp"

namespace llama::conformance {
namespace {

using Tokens = std::vector<int32_t>;
using Rows = std::map<std::pair<int32_t, int64_t>, std::vector<float>>;  // (sequence, pos)

constexpr int32_t kSequences = 4;

std::unique_ptr<InferenceBackend> make_sequences(const std::string& spec, int32_t sequences,
                                                 int64_t context = 0) {
  BackendOptions o;
  o.sequences = sequences;
  o.context = context;
  return BackendRegistry::instance().create(spec, o);
}

// Sequence i's tokens: the shared test tokens, shifted so no two sequences agree.
Tokens sequence_tokens(const Config& c, int32_t i, int64_t n) {
  Tokens t = test_tokens(c, n);
  for (size_t k = 1; k < t.size(); ++k) t[k] = int32_t((t[k] + 7 * i) % c.vocab_size);
  return t;
}

// Runs `runs` and files each returned row under (sequence, position).
void run_and_file(InferenceBackend& b, std::span<const SequenceRun> runs, int64_t vocab,
                  Rows& rows) {
  const std::span<const float> out = b.forward_runs(runs);
  if (int64_t(out.size()) != logit_rows(runs) * vocab) {
    throw Error("forward_runs returned " + std::to_string(out.size()) + " logits for " +
                std::to_string(logit_rows(runs)) + " rows of " + std::to_string(vocab));
  }
  size_t at = 0;
  for (const SequenceRun& r : runs) {
    const auto n = int64_t(r.tokens.size());
    const int64_t first = r.logits == RunLogits::all ? 0 : r.logits == RunLogits::last ? n - 1 : n;
    for (int64_t i = first; i < n; ++i, at += size_t(vocab)) {
      rows[{r.sequence, r.start_pos + i}] = {out.begin() + at, out.begin() + at + vocab};
    }
  }
}

// Every sequence's tokens fed in chunks of changing sizes, sequences in changing
// orders and some sitting out a step, rows wanted all, last or none: the rows filed.
Rows mixed_schedule(InferenceBackend& b, const std::vector<Tokens>& seqs, int64_t vocab) {
  Rows rows;
  std::vector<int64_t> done(seqs.size(), 0);
  const int64_t chunks[] = {5, 3, 1, 7, 1, 4, 2, 1, 6, 1};
  const RunLogits wants[] = {RunLogits::all, RunLogits::last, RunLogits::all, RunLogits::none};
  for (int step = 0; step < 64; ++step) {
    std::vector<SequenceRun> runs;
    for (size_t k = 0; k < seqs.size(); ++k) {
      const size_t s = (k + size_t(step)) % seqs.size();  // the order rotates
      if ((step + int(s)) % 3 == 2 || done[s] == int64_t(seqs[s].size())) continue;
      const int64_t n =
          std::min(chunks[(step + 3 * s) % std::size(chunks)], int64_t(seqs[s].size()) - done[s]);
      const RunLogits want = wants[(step + s) % std::size(wants)];
      runs.push_back(
          {int32_t(s), done[s], std::span(seqs[s]).subspan(size_t(done[s]), size_t(n)), want});
      done[s] += n;
    }
    if (runs.empty()) {
      if (std::all_of(done.begin(), done.end(), [&](int64_t d) { return d > 0; })) break;
      continue;
    }
    run_and_file(b, runs, vocab, rows);
  }
  return rows;
}

// Fails `r` at the first filed row that differs from `want` (rows [n, vocab] of
// `sequence` from position 0): beyond the tolerance, or at all when `exact`.
void compare_filed(CheckResult& r, const std::string& what, const Rows& rows, int32_t sequence,
                   const std::vector<float>& want, int64_t vocab, bool exact) {
  for (const auto& [key, got] : rows) {
    if (key.first != sequence || !r.ok) continue;
    const std::span<const float> expected =
        std::span(want).subspan(size_t(key.second * vocab), size_t(vocab));
    const std::string at = what + ": sequence " + std::to_string(sequence);
    if (exact) {
      if (std::memcmp(got.data(), expected.data(), size_t(vocab) * sizeof(float)) != 0) {
        const auto d = compare::diff_logits(got, expected);
        r.fail(at + ", position " + std::to_string(key.second) +
               ": not bit-identical to the sequence run alone (relative difference " +
               std::to_string(d.max_rel) + " at token " + std::to_string(d.abs_index) + ")");
      }
    } else {
      compare_rows(r, at, got, expected, vocab, key.second);
    }
  }
}

// Each sequence alone on a fresh single-sequence instance, one forward per position.
std::vector<float> alone_sequential(const std::string& spec, const Model& model,
                                    const Tokens& tokens) {
  auto b = make_backend(spec);
  b->prepare(model);
  return run_sequential(*b, tokens);
}

// Each sequence alone on a fresh instance holding kSequences, its tokens as one run.
std::vector<float> alone_one_run(const std::string& spec, const Model& model,
                                 const Tokens& tokens) {
  auto b = make_sequences(spec, kSequences);
  b->prepare(model);
  const SequenceRun run{0, 0, tokens, RunLogits::all};
  const std::span<const float> out = b->forward_runs(std::span(&run, 1));
  return {out.begin(), out.end()};
}

std::vector<Tokens> test_sequences(const Config& c) {
  std::vector<Tokens> seqs;
  const int64_t lengths[] = {17, 9, 23, 12};
  for (int32_t i = 0; i < kSequences; ++i)
    seqs.push_back(sequence_tokens(c, i, std::min(lengths[i], c.seq_len)));
  return seqs;
}

}  // namespace

CheckResult check_sequences_match_alone(const std::string& spec, const Model& model) {
  return guarded([&](CheckResult& r) {
    const Config& c = model.config;
    const std::vector<Tokens> seqs = test_sequences(c);
    auto b = make_sequences(spec, kSequences);
    if (b->sequences() != kSequences) {
      r.fail("asked for " + std::to_string(kSequences) + " sequences, holds " +
             std::to_string(b->sequences()));
      return;
    }
    b->prepare(model);
    const Rows rows = mixed_schedule(*b, seqs, c.vocab_size);
    for (int32_t s = 0; s < kSequences; ++s) {
      compare_filed(r, "mixed call", rows, s, alone_sequential(spec, model, seqs[size_t(s)]),
                    c.vocab_size, false);
    }
  });
}

CheckResult check_batch_invariant(const std::string& spec, const Model& model) {
  return guarded([&](CheckResult& r) {
    const Config& c = model.config;
    const std::vector<Tokens> seqs = test_sequences(c);
    auto b = make_sequences(spec, kSequences);
    b->prepare(model);
    const Rows rows = mixed_schedule(*b, seqs, c.vocab_size);
    for (int32_t s = 0; s < kSequences; ++s) {
      const std::vector<float> want = alone_one_run(spec, model, seqs[size_t(s)]);
      compare_filed(r, "mixed call against the sequence alone as one run", rows, s, want,
                    c.vocab_size, true);
      // And alone, one position per call.
      auto one = make_sequences(spec, kSequences);
      one->prepare(model);
      Rows single;
      for (size_t p = 0; p < seqs[size_t(s)].size(); ++p) {
        const SequenceRun run{1, int64_t(p), std::span(seqs[size_t(s)]).subspan(p, 1),
                              RunLogits::last};
        run_and_file(*one, std::span(&run, 1), c.vocab_size, single);
      }
      compare_filed(r, "one position per call against one run", single, 1, want, c.vocab_size,
                    true);
    }
  });
}

CheckResult check_sequence_rewind(const std::string& spec, const Model& model) {
  return guarded([&](CheckResult& r) {
    const Config& c = model.config;
    std::vector<Tokens> seqs = test_sequences(c);
    auto b = make_sequences(spec, kSequences);
    b->prepare(model);
    mixed_schedule(*b, seqs, c.vocab_size);
    // Sequence 1 goes back to position 3 with other tokens while the others go on.
    const int64_t back = 3;
    Tokens redo(seqs[1].begin() + back, seqs[1].end());
    for (int32_t& t : redo) t = int32_t((t + 1) % c.vocab_size);
    std::vector<SequenceRun> runs;
    Tokens next[kSequences];
    for (int32_t s = 0; s < kSequences; ++s) {
      if (s == 1) {
        runs.push_back({1, back, redo, RunLogits::all});
        continue;
      }
      next[s] = {int32_t((seqs[size_t(s)].back() + 3) % c.vocab_size)};
      runs.push_back({s, int64_t(seqs[size_t(s)].size()), next[s], RunLogits::all});
    }
    Rows rows;
    run_and_file(*b, runs, c.vocab_size, rows);
    seqs[1].resize(size_t(back));
    seqs[1].insert(seqs[1].end(), redo.begin(), redo.end());
    for (int32_t s = 0; s < kSequences; ++s) {
      if (s != 1) seqs[size_t(s)].push_back(next[s][0]);
      compare_filed(r, "after sequence 1 went back to position 3", rows, s,
                    alone_sequential(spec, model, seqs[size_t(s)]), c.vocab_size, false);
    }
  });
}

CheckResult check_sequence_bad_calls(const std::string& spec, const Model& model) {
  return guarded([&](CheckResult& r) {
    const Config& c = model.config;
    const int64_t context = std::min<int64_t>(c.seq_len, 32);
    auto b = make_sequences(spec, 2, context);
    b->prepare(model);
    const Tokens a = sequence_tokens(c, 0, 4), bad{1, int32_t(c.vocab_size)}, none{};
    const auto call = [&](std::vector<SequenceRun> runs) {
      return [&b, runs] { b->forward_runs(runs); };
    };
    expect_error(r, "no runs", call({}));
    expect_error(r, "sequence id 2 of 2", call({{2, 0, a, RunLogits::last}}));
    expect_error(r, "sequence id -1", call({{-1, 0, a, RunLogits::last}}));
    expect_error(r, "a run without tokens", call({{0, 0, none, RunLogits::last}}));
    expect_error(r, "a gap (position 1 of an empty sequence)", call({{0, 1, a, RunLogits::last}}));
    expect_error(r, "one sequence in two runs",
                 call({{0, 0, a, RunLogits::last}, {0, 4, a, RunLogits::last}}));
    expect_error(r, "a token outside the vocabulary", call({{1, 0, bad, RunLogits::last}}));
    const Tokens too_long = sequence_tokens(c, 0, context + 1);
    expect_error(r, "positions past the context of " + std::to_string(context),
                 call({{1, 0, too_long, RunLogits::last}}));
    // After the refusals, both sequences run from 0 as a fresh backend's.
    Rows rows;
    const SequenceRun runs[] = {{1, 0, a, RunLogits::all}, {0, 0, a, RunLogits::all}};
    run_and_file(*b, runs, c.vocab_size, rows);
    const std::vector<float> want = alone_sequential(spec, model, a);
    for (int32_t s = 0; s < 2; ++s)
      compare_filed(r, "after the refused calls", rows, s, want, c.vocab_size, false);
  });
}

CheckResult check_sequence_memory(const std::string& spec) {
  return guarded([&](CheckResult& r) {
    // A small model with a long context: 2 layers x 10,000,000 positions x kv_dim 16 is
    // 2.6 GB of f32 KV cache per sequence, 4096 sequences 10 TB (and their tokens alone,
    // which a backend behind the replay keeps, 164 GB).
    // llama2.c's header: dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len.
    const int32_t header[] = {16, 32, 2, 2, 2, 64, 10000000};
    const Config c = Config::from_header(header);
    const Model model = random_model(c, 7, "long-context");
    auto huge = make_sequences(spec, SequenceLengths::kMaxSequences);
    try {
      huge->prepare(model);
      r.fail("4096 sequences of 10,000,000 positions were not refused");
    } catch (const Error& e) {
      const std::string m = e.what();
      if (m.find("refused before allocating") == std::string::npos || m.find('\n') != m.npos)
        r.fail("the refusal is not the one line of the memory check: " + m);
    }
    // The same count with 16 positions each fits and runs.
    auto fits = make_sequences(spec, SequenceLengths::kMaxSequences, 16);
    fits->prepare(model);
    const Tokens t{1, 2, 3};
    const SequenceRun run{SequenceLengths::kMaxSequences - 1, 0, t, RunLogits::last};
    if (int64_t(fits->forward_runs(std::span(&run, 1)).size()) != c.vocab_size)
      r.fail("the last of 4096 sequences of 16 positions did not run");
    expect_error(r, "a context past the model's seq_len",
                 [&] { make_sequences(spec, 1, c.seq_len + 1)->prepare(model); });
  });
}

}  // namespace llama::conformance
