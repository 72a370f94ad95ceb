// Many sequences per call (plugin protocol 6): SequenceLengths's refusals, the default
// forward_runs of a single-sequence backend, the replay the registry puts around one
// when several sequences are asked for, and wrappers that pass sequences on.
#include <catch2/catch.hpp>

#include <vector>

#include "llama/error.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/registry.hpp"
#include "llama/replay_sequences.hpp"
#include "llama/sequence_runs.hpp"
#include "test_support.hpp"

using namespace llama;
using Catch::Matchers::Contains;

namespace {

using Tokens = std::vector<int32_t>;

SequenceRun run(int32_t sequence, int64_t start, const Tokens& tokens,
                RunLogits logits = RunLogits::last) {
  return {sequence, start, tokens, logits};
}

std::vector<float> copy(std::span<const float> s) { return {s.begin(), s.end()}; }

// The logits a fresh single-sequence backend gives for `tokens`, one row per position.
std::vector<float> alone(const std::string& spec, const Model& model, const Tokens& tokens) {
  auto b = BackendRegistry::instance().create(spec);
  b->prepare(model);
  return copy(b->forward_batch(tokens, 0, true));
}

// Row `i` of [rows, vocab] logits.
std::vector<float> row(const std::vector<float>& all, int64_t i, int64_t vocab) {
  return {all.begin() + i * vocab, all.begin() + (i + 1) * vocab};
}

// A backend written for one sequence, forward only: the reference backend behind it.
class OneSequence final : public InferenceBackend {
 public:
  std::string name() const override { return "one-sequence"; }
  void prepare(const Model& model) override { inner_->prepare(model); }
  std::span<const float> forward(int32_t token, int64_t pos) override {
    return inner_->forward(token, pos);
  }

 private:
  std::unique_ptr<InferenceBackend> inner_ = BackendRegistry::instance().create("reference");
};

// The same in the registry, as a plugin written for protocol 5's single sequence would be.
const BackendRegistrar kOneSequence{
    "test-one-sequence", "a single-sequence backend (the reference behind forward)",
    [](const BackendOptions&) { return std::make_unique<OneSequence>(); }};

}  // namespace

TEST_CASE("SequenceLengths refuses a call that breaks the contract, naming the run",
          "[sequences]") {
  SequenceLengths lengths(3, 8);
  const Tokens two{1, 2}, none{}, bad{1, 600};
  const int64_t vocab = 512;
  CHECK_THROWS_WITH(lengths.check({}, vocab, "b"), "b: a call needs at least one run");
  const SequenceRun unknown[] = {run(3, 0, two)};
  CHECK_THROWS_WITH(lengths.check(unknown, vocab, "b"),
                    "b: run 0 (sequence 3): no such sequence (this backend holds 3, ids 0 to 2)");
  const SequenceRun negative[] = {run(-1, 0, two)};
  CHECK_THROWS_WITH(lengths.check(negative, vocab, "b"), Contains("no such sequence"));
  const SequenceRun twice[] = {run(0, 0, two), run(1, 0, two), run(0, 2, two)};
  CHECK_THROWS_WITH(lengths.check(twice, vocab, "b"),
                    "b: run 2 (sequence 0): the sequence has another run in this call (one run "
                    "per sequence)");
  const SequenceRun empty[] = {run(1, 0, none)};
  CHECK_THROWS_WITH(lengths.check(empty, vocab, "b"), "b: run 0 (sequence 1): no tokens");
  const SequenceRun gap[] = {run(2, 1, two)};
  CHECK_THROWS_WITH(lengths.check(gap, vocab, "b"),
                    "b: run 0 (sequence 2): start position 1 leaves a gap: the sequence holds 0 "
                    "positions (a run may start at any of 0 to 0)");
  const SequenceRun token[] = {run(0, 0, bad)};
  CHECK_THROWS_WITH(lengths.check(token, vocab, "b"),
                    "b: run 0 (sequence 0): token 600 at position 1 outside the vocabulary [0, "
                    "512)");

  const Tokens six{1, 2, 3, 4, 5, 6};
  const SequenceRun first[] = {run(0, 0, six), run(2, 0, two)};
  lengths.check(first, vocab, "b");
  lengths.apply(first);
  CHECK(lengths.length(0) == 6);
  CHECK(lengths.length(1) == 0);
  CHECK(lengths.length(2) == 2);
  const SequenceRun past[] = {run(0, 6, Tokens{1, 2, 3})};
  CHECK_THROWS_WITH(lengths.check(past, vocab, "b"),
                    "b: run 0 (sequence 0): positions 6 to 8 pass the context of 8 positions per "
                    "sequence");
  // A rewind of one sequence leaves the others as they were.
  const SequenceRun rewind[] = {run(0, 3, two, RunLogits::none)};
  lengths.check(rewind, vocab, "b");
  lengths.apply(rewind);
  CHECK(lengths.length(0) == 5);
  CHECK(lengths.length(2) == 2);
  CHECK(logit_rows(first) == 2);
  const SequenceRun mixed[] = {run(0, 0, six, RunLogits::all), run(1, 0, two, RunLogits::none),
                               run(2, 0, two)};
  CHECK(logit_rows(mixed) == 7);
  lengths.clear();
  CHECK(lengths.length(0) == 0);
  CHECK_THROWS_WITH(SequenceLengths(0, 8), Contains("sequences must be in [1, 4096], got 0"));
}

TEST_CASE("a single-sequence backend runs sequence 0's runs and refuses others", "[sequences]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("stories260K.bin"));
  auto b = BackendRegistry::instance().create("test-one-sequence");
  REQUIRE(b->sequences() == 1);
  b->prepare(ck.model());
  const int64_t vocab = ck.config().vocab_size;
  const Tokens prompt{1, 403, 407, 261}, next{300, 301};
  const SequenceRun runs[] = {run(0, 0, prompt, RunLogits::all)};
  const std::vector<float> all = copy(b->forward_runs(runs));
  REQUIRE(all.size() == prompt.size() * size_t(vocab));
  const SequenceRun more[] = {run(0, 4, next, RunLogits::last)};
  const std::vector<float> last = copy(b->forward_runs(more));
  REQUIRE(last.size() == size_t(vocab));

  auto fresh = BackendRegistry::instance().create("test-one-sequence");
  fresh->prepare(ck.model());
  CHECK(copy(fresh->forward_batch(prompt, 0, true)) == all);
  CHECK(copy(fresh->forward_batch(next, 4, false)) == last);

  const SequenceRun other[] = {run(1, 0, prompt)};
  CHECK_THROWS_WITH(b->forward_runs(other),
                    "one-sequence: run 0 asks for sequence 1 but this backend holds one "
                    "(sequence 0)");
}

// Three sequences, two sharing a prefix, stepped together in changing orders, one
// rewound and one refused call: each row must be the logits of the sequence run alone
// on a fresh reference backend, bit for bit (the backends tried run position by
// position, so no chunking enters).
void check_three_sequences(InferenceBackend& b, const Model& model) {
  REQUIRE(b.sequences() == 3);
  b.prepare(model);
  const int64_t vocab = model.config.vocab_size;
  Tokens seq[3] = {{1, 403, 407, 261, 270}, {1, 403, 407, 300}, {1, 66, 99}};
  const SequenceRun prompts[] = {run(0, 0, seq[0], RunLogits::all), run(1, 0, seq[1]),
                                 run(2, 0, seq[2], RunLogits::none)};
  const std::vector<float> out = copy(b.forward_runs(prompts));
  REQUIRE(out.size() == size_t((seq[0].size() + 1) * vocab));
  CHECK(std::vector<float>(out.begin(), out.begin() + 5 * vocab) ==
        alone("reference", model, seq[0]));
  CHECK(row(out, 5, vocab) == row(alone("reference", model, seq[1]), 3, vocab));

  for (int step = 0; step < 3; ++step) {
    const Tokens t0{int32_t(200 + step)}, t1{int32_t(210 + step)}, t2{int32_t(220 + step)};
    // The order changes from step to step; the rows come back in run order.
    const SequenceRun decode[] = {run(2, int64_t(seq[2].size()), t2),
                                  run(0, int64_t(seq[0].size()), t0),
                                  run(1, int64_t(seq[1].size()), t1)};
    const std::vector<float> rows = copy(b.forward_runs(decode));
    seq[2].push_back(t2[0]);
    seq[0].push_back(t0[0]);
    seq[1].push_back(t1[0]);
    for (int i = 0; i < 3; ++i) {
      const Tokens& s = seq[decode[i].sequence];
      CHECK(row(rows, i, vocab) == row(alone("reference", model, s), int64_t(s.size()) - 1, vocab));
    }
  }

  // A rewind of sequence 1 to position 2 leaves 0 and 2 untouched.
  const Tokens other{500, 501};
  const SequenceRun rewind[] = {run(1, 2, other, RunLogits::all)};
  const std::vector<float> rewound = copy(b.forward_runs(rewind));
  const Tokens seq1{1, 403, 500, 501};
  const std::vector<float> fresh1 = alone("reference", model, seq1);
  CHECK(rewound == std::vector<float>(fresh1.begin() + 2 * vocab, fresh1.end()));
  const Tokens t0{42};
  const SequenceRun after[] = {run(0, int64_t(seq[0].size()), t0)};
  const std::vector<float> next0 = copy(b.forward_runs(after));
  seq[0].push_back(42);
  CHECK(next0 == row(alone("reference", model, seq[0]), int64_t(seq[0].size()) - 1, vocab));

  // A refused call changes nothing: sequence 2 still continues where it was.
  const SequenceRun gap[] = {run(2, int64_t(seq[2].size()) + 1, t0)};
  CHECK_THROWS_WITH(b.forward_runs(gap), Contains("leaves a gap"));
  const SequenceRun cont[] = {run(2, int64_t(seq[2].size()), t0)};
  const std::vector<float> next2 = copy(b.forward_runs(cont));
  seq[2].push_back(42);
  CHECK(next2 == row(alone("reference", model, seq[2]), int64_t(seq[2].size()) - 1, vocab));
}

TEST_CASE("replay runs several sequences on a single-sequence backend", "[sequences]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("stories260K.bin"));
  BackendOptions options;
  options.sequences = 3;
  auto b = replay_sequences(std::make_unique<OneSequence>(), options);
  CHECK_THAT(b->describe(), Contains("sequences: 3, run one after another on one KV cache"));
  check_three_sequences(*b, ck.model());
  CHECK_THAT(b->report(), Contains("switches between sequences"));
  // The registry does the same for a backend that holds one sequence.
  auto one = BackendRegistry::instance().create("test-one-sequence", options);
  CHECK(one->sequences() == 3);
  CHECK_THAT(one->describe(), Contains("run one after another on one KV cache"));
}

TEST_CASE("the reference backend holds several sequences natively", "[sequences]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("stories260K.bin"));
  BackendOptions options;
  options.sequences = 3;
  auto b = BackendRegistry::instance().create("reference", options);
  CHECK_THAT(b->describe(), !Contains("run one after another on one KV cache"));
  check_three_sequences(*b, ck.model());
  CHECK_THAT(b->describe(), Contains("sequences: 3 (a KV cache each)"));
}

TEST_CASE("wrappers pass sequences on, and one that does not is refused", "[sequences]") {
  BackendOptions options;
  options.sequences = 4;
  auto counting = BackendRegistry::instance().create("counting:timing:reference", options);
  CHECK(counting->sequences() == 4);
  const Checkpoint ck = Checkpoint::open(test::model_path("stories260K.bin"));
  counting->prepare(ck.model());
  const Tokens a{1, 2, 3}, b{1, 5};
  const SequenceRun runs[] = {run(3, 0, a), run(1, 0, b)};
  CHECK(counting->forward_runs(runs).size() == size_t(2 * ck.config().vocab_size));
  CHECK_THAT(counting->report(), Contains("forward_runs 1, positions 5") &&
                                     Contains("timing:reference: forward_runs: 1 calls"));
  // test-noisy (tests/conformance/faulty_wrappers.cpp) runs one sequence only.
  CHECK_THROWS_WITH(BackendRegistry::instance().create("test-noisy:reference", options),
                    "wrapper 'test-noisy' says its backend holds 1 sequences, but reference "
                    "holds 4 (a wrapper forwards sequences() and forward_runs: plugin protocol 6)");
}
