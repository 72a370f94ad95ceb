// Generation controls on the trained stories1M (whose greedy story is
// parity-stories1M.json's first case): --max-tokens, stop strings inside one
// piece and across several, EOS ids and --ignore-eos, the context length,
// prompts longer than it (refused or cut), and log-probabilities checked
// against the reference backend's logits.
#include <catch2/catch.hpp>
#include <cmath>

#include "llama/error.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/generate.hpp"
#include "llama/tokenizers/tokenizer.hpp"
#include "test_support.hpp"

using namespace llama;

namespace {

struct Fixture {
  Checkpoint ck = Checkpoint::open(test::model_path("stories1M.bin"));
  std::unique_ptr<Tokenizer> tok =
      open_tokenizer(test::model_path("tok2048.bin"), {.vocab_size = 2048});
  std::vector<int32_t> story =  // BOS, then the greedy story
      test::load_json(test::reference_path("parity-stories1M.json"))
          .at(0)
          .at("stream")
          .get<std::vector<int32_t>>();

  GenerationResult run(const GenerationOptions& g, const std::string& backend = "blas",
                       std::string* streamed = nullptr) const {
    auto b = test::make_backend(backend);
    b->prepare(ck.model());
    Sampler sampler(ck.config().vocab_size, 0.0f, 0.9f, 1);
    return generate(*b, ck.config(), *tok, sampler, g, [&](std::string_view piece) {
      if (streamed) *streamed += piece;
    });
  }
  // The greedy story's text (what generation prints with no controls).
  std::string story_text() const { return run({}).text; }
};

std::vector<int32_t> generated_part(const std::vector<int32_t>& stream) {
  return {stream.begin() + 1, stream.end()};
}

bool is_prefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  return a.size() <= b.size() && std::equal(a.begin(), a.end(), b.begin());
}

}  // namespace

TEST_CASE("generation: --max-tokens ends after N generated tokens", "[generate][control]") {
  const Fixture f;
  GenerationOptions g;
  g.max_tokens = 10;
  const GenerationResult r = f.run(g);
  CHECK(r.stop_reason == StopReason::max_tokens);
  CHECK(r.generated_tokens == std::vector<int32_t>(f.story.begin() + 1, f.story.begin() + 11));
  CHECK(std::string(to_string(r.stop_reason)) == "max_tokens");
  g.max_tokens = -1;
  CHECK_THROWS_AS(f.run(g), Error);
}

TEST_CASE("generation: stop strings inside a piece and across pieces", "[generate][control]") {
  const Fixture f;
  const std::string story = f.story_text();
  REQUIRE(story.starts_with("Once upon a time, there was a little girl named Lily."));
  for (const std::string stop : {"ark", "little girl", "Lily asked", "named Lily."}) {
    INFO("stop " << stop);
    const size_t at = story.find(stop);
    REQUIRE(at != std::string::npos);
    GenerationOptions g;
    g.stop = {"never appears", stop};
    std::string streamed;
    const GenerationResult r = f.run(g, "blas", &streamed);
    CHECK(r.stop_reason == StopReason::stop);
    CHECK(r.stop_text == stop);
    CHECK(r.text == story.substr(0, at));  // nothing from the stop string on
    CHECK(streamed == r.text);             // nor printed, even in part
    CHECK(is_prefix(r.generated_tokens, generated_part(f.story)));
  }
  // A stop string the story never writes: the whole story, as without it.
  GenerationOptions g;
  g.stop = {"Lily said goodbye to the moon"};
  const GenerationResult r = f.run(g);
  CHECK(r.text == story);
  CHECK(r.stop_reason == StopReason::bos);
  g.stop = {""};
  CHECK_THROWS_AS(f.run(g), Error);
}

TEST_CASE("generation: EOS ids end it, --ignore-eos does not stop", "[generate][control]") {
  const Fixture f;
  // Pretend the story's 12th generated token is an EOS id.
  const int32_t eos = f.story.at(12);
  const auto first = std::find(f.story.begin() + 1, f.story.end(), eos);
  GenerationOptions g;
  g.eos = {eos};
  GenerationResult r = f.run(g);
  CHECK(r.stop_reason == StopReason::eos);
  CHECK(r.generated_tokens == std::vector<int32_t>(f.story.begin() + 1, first));
  // The story ends by sampling BOS; with --ignore-eos it runs on to the context's end.
  g.eos.clear();
  g.ignore_eos = true;
  r = f.run(g);
  CHECK(r.stop_reason == StopReason::steps);
  CHECK(static_cast<int64_t>(r.generated_tokens.size()) == f.ck.config().seq_len);
  CHECK(is_prefix(generated_part(f.story), r.generated_tokens));
}

TEST_CASE("generation: the context bounds positions; a longer prompt is refused or cut",
          "[generate][control]") {
  const Fixture f;
  GenerationOptions g;
  g.context = 32;
  GenerationResult r = f.run(g);
  CHECK(r.stop_reason == StopReason::steps);
  CHECK(r.generated_tokens == std::vector<int32_t>(f.story.begin() + 1, f.story.begin() + 33));
  g.context = 257;
  CHECK_THROWS_WITH(f.run(g),
                    "the context of 257 positions is larger than the model's (seq_len 256)");

  std::string words;
  for (int i = 0; i < 400; ++i) words += "the dog ran. ";
  const std::vector<int32_t> full = f.tok->encode(words);
  REQUIRE(full.size() > 256);
  g = {};
  g.prompt = words;
  CHECK_THROWS_WITH(f.run(g), "the prompt is " + std::to_string(full.size()) +
                                  " tokens, longer than the context of 256 positions");
  g.truncation = PromptTruncation::left;
  r = f.run(g);
  CHECK(r.prompt_encoded == static_cast<int64_t>(full.size()));
  CHECK(r.prompt_tokens ==
        std::vector<int32_t>(full.begin(), full.begin() + 128));  // half the context
  CHECK(r.prompt_dropped == static_cast<int64_t>(full.size()) - 128);
  // run.c's count: positions 128..255 each sample one token, and the one sampled at 255
  // is kept though never fed.
  CHECK(r.generated_tokens.size() == 129);
  g.truncation = PromptTruncation::right;
  g.max_tokens = 16;  // leaves 16 positions to generate into
  r = f.run(g);
  REQUIRE(r.prompt_tokens.size() == 240);
  CHECK(r.prompt_tokens.front() == full.front());  // BOS stays first
  CHECK(std::vector<int32_t>(r.prompt_tokens.begin() + 1, r.prompt_tokens.end()) ==
        std::vector<int32_t>(full.end() - 239, full.end()));
  CHECK(r.generated_tokens.size() == 16);
}

TEST_CASE("generation: log-probabilities are the log-softmax of the reference backend's logits",
          "[generate][control][logprobs]") {
  const Fixture f;
  for (const float temperature : {0.0f, 0.8f}) {
    INFO("temperature " << temperature);
    GenerationOptions g;
    g.prompt = "One day, a little bird";
    g.max_tokens = 24;
    g.logprobs = 3;
    auto blas = test::make_backend("blas");
    blas->prepare(f.ck.model());
    Sampler sampler(f.ck.config().vocab_size, temperature, 0.9f, 42);
    const GenerationResult r = generate(*blas, f.ck.config(), *f.tok, sampler, g);
    REQUIRE(r.logprobs.size() == r.generated_tokens.size());
    // The reference backend's logits along the same stream.
    std::vector<int32_t> stream = r.prompt_tokens;
    stream.insert(stream.end(), r.generated_tokens.begin(), r.generated_tokens.end());
    auto ref = test::make_backend("reference");
    ref->prepare(f.ck.model());
    const std::vector<float> logits = test::sequential_logits(*ref, stream);
    const auto vocab = static_cast<size_t>(f.ck.config().vocab_size);
    for (size_t i = 0; i < r.generated_tokens.size(); ++i) {
      const size_t pos = r.prompt_tokens.size() - 1 + i;  // the logits the token was drawn from
      const auto row = std::span(logits).subspan(pos * vocab, vocab);
      const double scale = temperature > 0 ? 1.0 / temperature : 1.0;
      double max = -1e300, z = 0;
      for (float l : row) max = std::max(max, l * scale);
      for (float l : row) z += std::exp(l * scale - max);
      const auto want = [&](int32_t id) {
        return row[static_cast<size_t>(id)] * scale - max - std::log(z);
      };
      const GeneratedLogprob& lp = r.logprobs[i];
      CHECK(lp.value.id == r.generated_tokens[i]);
      CHECK(std::abs(lp.value.logprob - want(lp.value.id)) < 1e-5);
      REQUIRE(lp.value.top.size() == 3);
      REQUIRE(lp.top_pieces.size() == 3);
      for (const TokenAlternative& a : lp.value.top) CHECK(std::abs(a.logprob - want(a.id)) < 1e-5);
      CHECK(lp.value.top[0].logprob >= lp.value.top[1].logprob);
      if (temperature == 0) CHECK(lp.value.top[0].id == lp.value.id);  // greedy picks the top one
      CHECK(lp.piece == f.tok->decode_token(stream[pos], lp.value.id));
    }
  }
  GenerationOptions bad;
  bad.logprobs = 21;
  CHECK_THROWS_AS(f.run(bad), Error);
}
