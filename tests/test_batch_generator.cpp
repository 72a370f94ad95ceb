// BatchGenerator (llama/batch_generator.hpp): requests stepped together through
// forward_runs give, each, the tokens generate() gives it alone (on backends whose
// batch_invariant() holds for the model: graph and reference on stories1M.bin, blas
// on stories1M.q8_0.gguf); the queue, cancel, stop strings split across pieces,
// prefix reuse, the token budget's schedule, and the refusals.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <memory>

#include "llama/batch_generator.hpp"
#include "llama/error.hpp"
#include "llama/formats/gguf_model.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/generate.hpp"
#include "llama/registry.hpp"
#include "test_support.hpp"

using namespace llama;
using Catch::Matchers::Contains;

namespace {

using Tokens = std::vector<int32_t>;

// A model and its tokenizer, kept open for the test: stories1M as llama2.c f32
// (graph, reference) or as llama.cpp's Q8_0 GGUF with its own tokenizer (blas, so
// the generator also runs a quantized model and a GGUF vocabulary).
struct Opened {
  std::unique_ptr<Checkpoint> llama2c;
  std::unique_ptr<gguf::GgufModel> gguf;
  std::shared_ptr<const Tokenizer> tok;
  const Model& model() const { return llama2c ? llama2c->model() : gguf->model; }
  const Config& config() const { return model().config; }
};

Opened open_for(const std::string& backend) {
  Opened o;
  if (backend == "blas") {
    o.gguf = std::make_unique<gguf::GgufModel>(
        gguf::open_model(test::model_path("gguf/stories1M.q8_0.gguf")));
    o.tok = o.gguf->tokenizer;
  } else {
    o.llama2c = std::make_unique<Checkpoint>(Checkpoint::open(test::model_path("stories1M.bin")));
    o.tok = open_tokenizer(test::model_path("tok2048.bin"), {.vocab_size = 2048});
  }
  REQUIRE(o.tok != nullptr);
  return o;
}

std::unique_ptr<InferenceBackend> prepared(const std::string& spec, const Opened& m,
                                           int32_t sequences) {
  BackendOptions bo;
  bo.threads = 2;
  bo.sequences = sequences;
  auto b = BackendRegistry::instance().create(spec, bo);
  b->prepare(m.model());
  return b;
}

struct Case {
  std::string prompt;
  float temperature = 0;
  float top_p = 0.9f;
  uint64_t seed = 1;
  int64_t max_tokens = 40;
};

const std::vector<Case> kCases = {
    {"Once upon a time", 0.0f, 0.9f, 1, 40},
    {"The little dog ran to the park", 0.8f, 0.9f, 42, 48},
    {"Lily and Ben", 1.0f, 0.0f, 7, 32},
    {"One day, a big bird", 0.5f, 0.95f, 1234, 56},
};

// generate() for the case alone, on a backend of one sequence.
GenerationResult solo(const std::string& spec, const Opened& m, const Case& c) {
  auto b = prepared(spec, m, 1);
  Sampler sampler(m.config().vocab_size, c.temperature, c.top_p, c.seed);
  GenerationOptions g;
  g.prompt = c.prompt;
  g.max_tokens = c.max_tokens;
  return generate(*b, m.config(), *m.tok, sampler, g);
}

GenerationRequest request_for(const Opened& m, const Case& c) {
  GenerationRequest r;
  r.prompt = m.tok->encode(c.prompt, {.add_special = true});
  r.sampling = {c.temperature, c.top_p, c.seed};
  r.max_tokens = c.max_tokens;
  return r;
}

// Finished requests by id, and each one's streamed pieces joined.
struct Collected {
  std::map<uint64_t, Completion> done;
  std::map<uint64_t, std::string> streamed;
};

uint64_t add_collected(BatchGenerator& g, GenerationRequest r, Collected& out) {
  auto streamed = std::make_shared<std::string>();
  r.on_piece = [streamed, own = std::move(r.on_piece)](std::string_view p) {
    *streamed += p;
    if (own) own(p);
  };
  r.on_finish = [&out, streamed](const Completion& c) {
    out.done[c.id] = c;
    out.streamed[c.id] = *streamed;
  };
  return g.add(std::move(r));
}

// Records every forward_runs call's runs (sequence, start, tokens, logits) and
// forwards it: the schedule a step made.
class Recording final : public InferenceBackend {
 public:
  struct Run {
    int32_t sequence;
    int64_t start, tokens;
    RunLogits logits;
  };
  explicit Recording(std::unique_ptr<InferenceBackend> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return "recording:" + inner_->name(); }
  void prepare(const Model& m) override { inner_->prepare(m); }
  std::span<const float> forward(int32_t t, int64_t pos) override {
    return inner_->forward(t, pos);
  }
  int32_t sequences() const override { return inner_->sequences(); }
  bool batch_invariant() const override { return inner_->batch_invariant(); }
  std::span<const float> forward_runs(std::span<const SequenceRun> runs) override {
    std::vector<Run>& call = calls.emplace_back();
    for (const SequenceRun& r : runs)
      call.push_back({r.sequence, r.start_pos, int64_t(r.tokens.size()), r.logits});
    return inner_->forward_runs(runs);
  }
  std::vector<std::vector<Run>> calls;

 private:
  std::unique_ptr<InferenceBackend> inner_;
};

}  // namespace

TEST_CASE("batch generator: requests stepped together give generate()'s tokens for each",
          "[batch_generator]") {
  for (const std::string spec : {"graph", "blas", "reference"}) {
    INFO("backend " << spec);
    const Opened m = open_for(spec);
    auto backend = prepared(spec, m, 4);
    REQUIRE(backend->batch_invariant());
    BatchGenerator g(*backend, m.config(), *m.tok);
    REQUIRE(g.sequences() == 4);
    Collected out;
    std::vector<uint64_t> ids;
    for (const Case& c : kCases) {
      GenerationRequest r = request_for(m, c);
      r.logprobs = 2;
      ids.push_back(add_collected(g, std::move(r), out));
    }
    CHECK(g.running() == 4);
    CHECK(g.queued() == 0);
    g.run();
    REQUIRE(out.done.size() == kCases.size());
    for (size_t i = 0; i < kCases.size(); ++i) {
      INFO("request " << i << ": " << kCases[i].prompt);
      const GenerationResult want = solo(spec, m, kCases[i]);
      const Completion& got = out.done.at(ids[i]);
      CHECK(got.tokens == want.generated_tokens);
      CHECK(got.stop_reason == want.stop_reason);
      // generate() prints the prompt's pieces first; the request only its own.
      CHECK(want.text.ends_with(got.text));
      CHECK(out.streamed.at(ids[i]) == got.text);
      CHECK(got.usage.prompt_tokens == int64_t(want.prompt_tokens.size()));
      CHECK(got.usage.cached_prompt_tokens == 0);
      CHECK(got.usage.completion_tokens == int64_t(want.generated_tokens.size()));
      CHECK(got.timings.prompt_positions == got.usage.prompt_tokens);
      REQUIRE(got.logprobs.size() == got.tokens.size());
      for (size_t k = 0; k < got.tokens.size(); ++k) {
        CHECK(got.logprobs[k].value.id == got.tokens[k]);
        CHECK(got.logprobs[k].value.top.size() == 2);
      }
    }
  }
}

TEST_CASE("batch generator: more requests than sequences queue, and all finish",
          "[batch_generator]") {
  const Opened m = open_for("graph");
  auto backend = prepared("graph", m, 2);
  BatchGenerator g(*backend, m.config(), *m.tok, {.max_queue = 4});
  Collected out;
  std::vector<uint64_t> ids;
  for (int i = 0; i < 6; ++i) {
    ids.push_back(add_collected(g, request_for(m, kCases[size_t(i) % kCases.size()]), out));
  }
  CHECK(g.running() == 2);
  CHECK(g.queued() == 4);
  // The queue holds 4: a seventh is refused, with one line.
  CHECK_THROWS_WITH(g.add(request_for(m, kCases[0])),
                    "the queue is full (max_queue 4): every sequence is busy");
  g.run();
  REQUIRE(out.done.size() == 6);
  CHECK(g.running() == 0);
  CHECK(g.queued() == 0);
  for (int i = 0; i < 6; ++i) {
    INFO("request " << i);
    const Case& c = kCases[size_t(i) % kCases.size()];
    const Completion& got = out.done.at(ids[size_t(i)]);
    CHECK(got.tokens == solo("graph", m, c).generated_tokens);
    if (i >= 2) CHECK(got.timings.queued_ms > 0);
  }
  CHECK_FALSE(g.step());  // nothing left: no call
}

TEST_CASE("batch generator: cancel ends a request at once and frees its sequence",
          "[batch_generator]") {
  const Opened m = open_for("reference");
  auto backend = prepared("reference", m, 2);
  BatchGenerator g(*backend, m.config(), *m.tok);
  Collected out;
  const uint64_t a = add_collected(g, request_for(m, kCases[0]), out);
  const uint64_t b = add_collected(g, request_for(m, kCases[1]), out);
  const uint64_t c = add_collected(g, request_for(m, kCases[2]), out);  // waits
  CHECK(g.queued() == 1);
  for (int i = 0; i < 10; ++i) REQUIRE(g.step());
  REQUIRE(out.done.empty());
  // sequence_states: who holds each sequence, and what its cache holds.
  std::vector<SequenceState> states = g.sequence_states();
  REQUIRE(states.size() == 2);
  const size_t b_seq = states[0].request == b ? 0 : 1;
  CHECK(states[b_seq].request == b);
  CHECK(states[1 - b_seq].request == a);
  CHECK(states[b_seq].cached > 0);
  CHECK(g.cancel(b));
  REQUIRE(out.done.count(b) == 1);
  const Completion& cancelled = out.done.at(b);
  CHECK(cancelled.stop_reason == StopReason::cancelled);
  CHECK(std::string(to_string(cancelled.stop_reason)) == "cancelled");
  // Ten steps: the prompt, then nine decoded tokens (one sampled after each call).
  CHECK(cancelled.tokens.size() == 10);
  const Tokens b_alone = solo("reference", m, kCases[1]).generated_tokens;
  CHECK(std::equal(cancelled.tokens.begin(), cancelled.tokens.end(), b_alone.begin()));
  CHECK_FALSE(g.cancel(b));     // already ended
  CHECK_FALSE(g.cancel(9999));  // never was
  CHECK(g.queued() == 0);       // the waiting request took b's sequence
  CHECK(g.running() == 2);
  CHECK(g.sequence_states()[b_seq].request == c);
  // A queued request is cancelled as well.
  const uint64_t d = add_collected(g, request_for(m, kCases[3]), out);
  CHECK(g.queued() == 1);
  CHECK(g.cancel(d));
  CHECK(out.done.at(d).stop_reason == StopReason::cancelled);
  CHECK(out.done.at(d).tokens.empty());
  CHECK(g.queued() == 0);
  g.run();
  CHECK(out.done.at(a).tokens == solo("reference", m, kCases[0]).generated_tokens);
  CHECK(out.done.at(c).tokens == solo("reference", m, kCases[2]).generated_tokens);
  for (const SequenceState& q : g.sequence_states()) {
    CHECK(q.request == 0);
    CHECK(q.cached > 0);  // kept for a later prompt with the same prefix
  }
}

TEST_CASE("batch generator: a stop string split across tokens never reaches the pieces",
          "[batch_generator]") {
  const Opened m = open_for("graph");
  const Case story = kCases[0];
  // The pieces of the greedy story, to find a stop string that spans two of them.
  std::vector<std::string> pieces;
  {
    auto backend = prepared("graph", m, 1);
    BatchGenerator g(*backend, m.config(), *m.tok);
    GenerationRequest r = request_for(m, story);
    r.on_piece = [&](std::string_view p) { pieces.emplace_back(p); };
    g.add(std::move(r));
    g.run();
  }
  // The first two pieces of at least 3 bytes side by side whose spanning 4 bytes
  // occur nowhere before them.
  std::string stop, want;
  for (size_t k = 0, at = 0; k + 1 < pieces.size() && stop.empty(); at += pieces[k++].size()) {
    if (pieces[k].size() < 3 || pieces[k + 1].size() < 3) {
      want += pieces[k];
      continue;
    }
    const std::string text = want + pieces[k] + pieces[k + 1];
    const std::string s = pieces[k].substr(pieces[k].size() - 2) + pieces[k + 1].substr(0, 2);
    if (text.find(s) == at + pieces[k].size() - 2) {
      stop = s;
      want += pieces[k].substr(0, pieces[k].size() - 2);
    } else {
      want += pieces[k];
    }
  }
  REQUIRE_FALSE(stop.empty());
  INFO("stop '" << stop << "', expected text '" << want << "'");

  auto backend = prepared("graph", m, 3);
  BatchGenerator g(*backend, m.config(), *m.tok);
  Collected out;
  GenerationRequest r = request_for(m, story);
  r.stop = {"never written", stop};
  const uint64_t id = add_collected(g, std::move(r), out);
  add_collected(g, request_for(m, kCases[1]), out);  // company
  g.run();
  const Completion& c = out.done.at(id);
  CHECK(c.stop_reason == StopReason::stop);
  CHECK(c.stop_text == stop);
  CHECK(c.text == want);
  CHECK(out.streamed.at(id) == want);  // nothing of the stop string, even in part
}

TEST_CASE("batch generator: prefix reuse starts from the cache and changes no token",
          "[batch_generator]") {
  const Opened m = open_for("graph");
  auto backend = prepared("graph", m, 2);
  BatchGenerator g(*backend, m.config(), *m.tok);
  Collected out;
  const Case first = kCases[0];
  const uint64_t a = add_collected(g, request_for(m, first), out);
  add_collected(g, request_for(m, kCases[2]), out);  // fills the other sequence
  g.run();
  const Tokens prompt = request_for(m, first).prompt;
  const Completion& a_done = out.done.at(a);

  // The same prompt with other tokens after it: its sequence holds the prompt.
  GenerationRequest longer = request_for(m, kCases[3]);
  longer.prompt = prompt;
  for (int32_t t : m.tok->encode(" and a cat", {.add_special = false})) longer.prompt.push_back(t);
  const GenerationRequest longer_copy = longer;
  const uint64_t b = add_collected(g, std::move(longer), out);
  g.run();
  const Completion& b_done = out.done.at(b);
  CHECK(b_done.usage.cached_prompt_tokens == int64_t(prompt.size()));
  CHECK(b_done.timings.prompt_positions == int64_t(longer_copy.prompt.size() - prompt.size()));

  // The whole prompt cached (a's prompt again: b's sequence starts with it): its
  // last token runs again, for the logits.
  const uint64_t c = add_collected(g, request_for(m, first), out);
  g.run();
  CHECK(out.done.at(c).usage.cached_prompt_tokens == int64_t(prompt.size()) - 1);
  CHECK(out.done.at(c).tokens == a_done.tokens);

  // Without reuse (a fresh generator on a fresh backend), the same tokens.
  auto fresh = prepared("graph", m, 2);
  BatchGenerator h(*fresh, m.config(), *m.tok);
  Collected plain;
  const uint64_t b2 = add_collected(h, longer_copy, plain);
  h.run();
  CHECK(plain.done.at(b2).usage.cached_prompt_tokens == 0);
  CHECK(plain.done.at(b2).tokens == b_done.tokens);
}

TEST_CASE("batch generator: the token budget spreads a long prompt while others decode",
          "[batch_generator]") {
  const Opened m = open_for("graph");
  auto recording = std::make_unique<Recording>(
      BackendRegistry::instance().create("graph", {.threads = 2, .sequences = 2}));
  recording->prepare(m.model());
  Recording& rec = *recording;
  constexpr int64_t kBudget = 16;
  BatchGenerator g(rec, m.config(), *m.tok, {.token_budget = kBudget});
  Collected out;
  const uint64_t a = add_collected(g, request_for(m, kCases[1]), out);
  REQUIRE(g.step());  // a's prompt
  REQUIRE(g.step());  // a decodes
  std::string words;
  for (int i = 0; i < 12; ++i) words += "The cat sat on the mat. ";
  Case long_case{words, 0.7f, 0.9f, 99, 8};
  GenerationRequest lr = request_for(m, long_case);
  const auto n_long = int64_t(lr.prompt.size());
  REQUIRE(n_long > 4 * kBudget);
  const uint64_t b = add_collected(g, std::move(lr), out);
  const size_t first_call = rec.calls.size();
  g.run();

  // Every call after b came: a's one token first (while a decodes), then a chunk of
  // b's prompt in what the budget leaves; logits only for b's last chunk.
  int64_t b_prompt = 0, b_chunks = 0;
  for (size_t i = first_call; i < rec.calls.size() && b_prompt < n_long; ++i) {
    const auto& call = rec.calls[i];
    int64_t total = 0;
    for (const auto& r : call) total += r.tokens;
    CHECK(total <= kBudget);
    REQUIRE(call.size() == 2);
    CHECK(call[0].tokens == 1);  // a, decoding
    CHECK(call[0].logits == RunLogits::last);
    b_prompt += call[1].tokens;
    ++b_chunks;
    CHECK(call[1].logits == (b_prompt == n_long ? RunLogits::last : RunLogits::none));
  }
  CHECK(b_prompt == n_long);
  CHECK(b_chunks == (n_long + kBudget - 2) / (kBudget - 1));
  CHECK(out.done.at(a).tokens == solo("graph", m, kCases[1]).generated_tokens);
  CHECK(out.done.at(b).tokens == solo("graph", m, long_case).generated_tokens);
}

TEST_CASE("batch generator: bad requests and options are refused with one line",
          "[batch_generator]") {
  const Opened m = open_for("reference");
  auto backend = prepared("reference", m, 1);
  BatchGenerator g(*backend, m.config(), *m.tok, {.context = 64, .max_queue = 1});
  GenerationRequest empty;
  CHECK_THROWS_WITH(g.add(empty), "the request's prompt is empty");
  GenerationRequest too_long;
  too_long.prompt.assign(65, 5);
  CHECK_THROWS_WITH(g.add(too_long),
                    "the prompt is 65 tokens, longer than the context of 64 positions");
  too_long.prompt.resize(40);
  too_long.context = 32;
  CHECK_THROWS_WITH(g.add(too_long),
                    "the prompt is 40 tokens, longer than the context of 32 positions");
  GenerationRequest bad = request_for(m, kCases[0]);
  bad.logprobs = 21;
  CHECK_THROWS_WITH(g.add(bad), "logprobs must be in [0, 20], got 21");
  bad.logprobs = -1;
  bad.max_tokens = -1;
  CHECK_THROWS_WITH(g.add(bad), "max_tokens must be >= 0, got -1");
  bad.max_tokens = 0;
  bad.sampling.top_p = 2;
  CHECK_THROWS_WITH(g.add(bad), "sampler: top-p must be in [0, 1]");
  bad.sampling.top_p = 0.9f;
  bad.stop = {""};
  CHECK_THROWS_WITH(g.add(bad), "a stop string must not be empty");
  bad.stop.clear();
  bad.prompt[0] = 5000;
  CHECK_THROWS_WITH(g.add(bad), "prompt token 0 is 5000, outside the vocabulary of 2048");
  bad.prompt[0] = 1;
  bad.context = 65;
  CHECK_THROWS_WITH(g.add(bad),
                    "the request's context of 65 positions is larger than the generator's (64)");
  // One sequence and a queue of one: the third request is refused.
  g.add(request_for(m, kCases[0]));
  g.add(request_for(m, kCases[1]));
  CHECK_THROWS_WITH(g.add(request_for(m, kCases[2])),
                    "the queue is full (max_queue 1): every sequence is busy");
  // Options.
  CHECK_THROWS_WITH(BatchGenerator(*backend, m.config(), *m.tok, {.sequences = 2}),
                    "the batch generator asks for 2 sequences; the backend holds 1");
  CHECK_THROWS_WITH(BatchGenerator(*backend, m.config(), *m.tok, {.token_budget = 0}),
                    "token_budget must be >= 1, got 0");
  CHECK_THROWS_WITH(BatchGenerator(*backend, m.config(), *m.tok, {.context = 257}),
                    "the context of 257 positions is larger than the model's (seq_len 256)");
  // A callback may not step the generator it runs in.
  GenerationRequest nested = request_for(m, kCases[0]);
  BatchGenerator h(*backend, m.config(), *m.tok);
  nested.on_piece = [&h](std::string_view) { h.step(); };
  h.add(std::move(nested));
  CHECK_THROWS_WITH(h.run(), "BatchGenerator::step called from one of its own callbacks");
}

TEST_CASE("batch generator: callbacks may add and cancel requests", "[batch_generator]") {
  const Opened m = open_for("graph");
  auto backend = prepared("graph", m, 3);
  BatchGenerator g(*backend, m.config(), *m.tok);
  Collected out;
  uint64_t c = 0, d = 0;
  // a ends after 5 tokens and adds d from its on_finish: d takes a's sequence.
  Case short_a = kCases[0];
  short_a.max_tokens = 5;
  GenerationRequest a = request_for(m, short_a);
  a.on_finish = [&](const Completion& done) {
    out.done[done.id] = done;
    d = add_collected(g, request_for(m, kCases[3]), out);
    CHECK(g.queued() == 0);
  };
  const uint64_t a_id = g.add(std::move(a));
  // b cancels c (later in the same step's runs) on its third piece.
  GenerationRequest b = request_for(m, kCases[1]);
  int pieces = 0;
  b.on_piece = [&](std::string_view) {
    if (++pieces == 3) CHECK(g.cancel(c));
  };
  const uint64_t b_id = add_collected(g, std::move(b), out);
  c = add_collected(g, request_for(m, kCases[2]), out);
  g.run();
  CHECK(out.done.at(a_id).tokens.size() == 5);
  CHECK(out.done.at(b_id).tokens == solo("graph", m, kCases[1]).generated_tokens);
  const Completion& cancelled = out.done.at(c);
  CHECK(cancelled.stop_reason == StopReason::cancelled);
  const Tokens c_alone = solo("graph", m, kCases[2]).generated_tokens;
  REQUIRE(cancelled.tokens.size() <= c_alone.size());
  CHECK(std::equal(cancelled.tokens.begin(), cancelled.tokens.end(), c_alone.begin()));
  REQUIRE(d != 0);
  CHECK(out.done.at(d).tokens == solo("graph", m, kCases[3]).generated_tokens);
  CHECK(g.running() == 0);
}

TEST_CASE("batch generator: on_logprobs passes each token with the piece that ends its text",
          "[batch_generator]") {
  const Opened m = open_for("graph");
  auto backend = prepared("graph", m, 1);
  BatchGenerator g(*backend, m.config(), *m.tok);
  // Each event: "L<n>" for n logprobs passed, "P<text>" for a piece.
  struct Run {
    std::vector<std::string> events;
    std::vector<GeneratedLogprob> passed;
    Completion done;
  };
  const auto run = [&](std::vector<std::string> stop, int64_t max_tokens) {
    Run out;
    GenerationRequest r;
    r.prompt = m.tok->encode("Once upon a time", {.add_special = true});
    r.max_tokens = max_tokens;
    r.stop = std::move(stop);
    r.logprobs = 1;
    r.on_logprobs = [&](std::span<const GeneratedLogprob> l) {
      out.events.push_back("L" + std::to_string(l.size()));
      out.passed.insert(out.passed.end(), l.begin(), l.end());
    };
    r.on_piece = [&](std::string_view p) { out.events.push_back("P" + std::string(p)); };
    r.on_finish = [&](const Completion& c) { out.done = c; };
    g.add(std::move(r));
    g.run();
    return out;
  };
  const Run all = run({}, 30);
  REQUIRE(all.done.logprobs.size() == 30);
  REQUIRE(all.passed.size() == 30);
  std::string text;
  for (size_t k = 0; k < all.passed.size(); ++k) {
    CHECK(all.passed[k].value.id == all.done.tokens[k]);
    text += all.passed[k].piece;
  }
  CHECK(text == all.done.text);
  // Without stop strings each token's text goes out at once: its logprob, then its piece.
  for (size_t e = 0; e + 1 < all.events.size(); ++e) {
    if (all.events[e][0] == 'P') CHECK(all.events[e + 1][0] == 'L');
  }

  // A stop string made of the end of token k and the start of token k+1: tokens up to
  // k are passed (k's text begins before the stop), none after.
  std::string stop;
  size_t kept = 0, start = all.passed[0].piece.size();
  for (size_t k = 1; k + 1 < all.passed.size() && stop.empty(); ++k) {
    const std::string& a = all.passed[k].piece;
    const std::string& b = all.passed[k + 1].piece;
    start += a.size();
    if (a.size() < 2 || b.empty()) continue;
    const std::string candidate = a.substr(a.size() - 1) + b.substr(0, 1);
    if (all.done.text.find(candidate) != start - 1) continue;
    stop = candidate;
    kept = k + 1;
  }
  REQUIRE_FALSE(stop.empty());
  const Run stopped = run({stop}, 30);
  CHECK(stopped.done.stop_reason == StopReason::stop);
  CHECK(stopped.done.logprobs.size() == kept + 1);  // the stop's last token is generated
  REQUIRE(stopped.passed.size() == kept);
  for (size_t k = 0; k < kept; ++k) CHECK(stopped.passed[k].piece == all.passed[k].piece);
}
