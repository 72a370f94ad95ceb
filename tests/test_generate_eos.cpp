// Hugging Face EOS stopping (stop_at_bos off, the model's EOS ids): a sampled
// id among them ends generation (stop_reason eos, the id not kept), as
// transformers' generate does, and BOS has no role of its own; llama2.c files
// keep run.c's BOS rule.
#include <algorithm>
#include <catch2/catch.hpp>

#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/generate.hpp"
#include "llama/registry.hpp"
#include "llama/tokenizers/llama2c_tokenizer.hpp"
#include "llama/tokenizers/tokenizer.hpp"
#include "test_support.hpp"

using namespace llama;

namespace {

struct Run {
  GenerationResult result;
  std::vector<int32_t> stream;  // prompt then generated
};

// `eos` empty: run.c's rule; else the Hugging Face rule with those ids.
Run run(const Checkpoint& ck, const Tokenizer& tok, const std::string& prompt,
        std::vector<int32_t> eos) {
  auto backend = test::make_backend("reference");
  backend->prepare(ck.model());
  Sampler sampler(ck.config().vocab_size, 0.0f, 0.9f, 1);
  GenerationOptions g;
  g.prompt = prompt;
  g.steps = 256;
  g.stop_at_bos = eos.empty();
  g.eos = std::move(eos);
  Run r{generate(*backend, ck.config(), tok, sampler, g), {}};
  r.stream = r.result.prompt_tokens;
  r.stream.insert(r.stream.end(), r.result.generated_tokens.begin(),
                  r.result.generated_tokens.end());
  return r;
}

}  // namespace

TEST_CASE("Hugging Face models stop at any of their EOS ids and only there", "[generate][eos]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("stories1M.bin"));
  const Llama2cTokenizer tok(test::model_path("tok2048.bin"), ck.config().vocab_size);
  const nlohmann::json c = test::load_json(test::reference_path("parity-stories1M.json"))[0];
  REQUIRE(c["stopped_at_bos"].get<bool>());
  const auto reference = c["stream"].get<std::vector<int32_t>>();

  // run.c's rule: the story ends where the model samples BOS.
  const Run bos = run(ck, tok, c["prompt"], {});
  CHECK(bos.stream == reference);
  CHECK(bos.result.stop_reason == StopReason::bos);
  CHECK(std::string(to_string(bos.result.stop_reason)) == "bos");

  // EOS ids [1, 2] (hf/stories1M's generation_config): the same stream, reason eos.
  const Run eos = run(ck, tok, c["prompt"], {1, 2});
  CHECK(eos.stream == reference);
  CHECK(eos.result.stop_reason == StopReason::eos);
  CHECK(std::string(to_string(eos.result.stop_reason)) == "eos");

  // Any id: the stream up to its first sampled occurrence, without it.
  const size_t n_prompt = eos.result.prompt_tokens.size();
  const int32_t word = reference.at(n_prompt + 10);
  const auto first =
      std::find(reference.begin() + static_cast<long>(n_prompt), reference.end(), word);
  const Run early = run(ck, tok, c["prompt"], {5000, word});
  CHECK(early.stream == std::vector<int32_t>(reference.begin(), first));
  CHECK(early.result.stop_reason == StopReason::eos);
  // BOS is not among them: generation goes past the end of the story.
  const Run past = run(ck, tok, c["prompt"], {2});
  CHECK(past.stream.size() > reference.size());
  CHECK(std::equal(reference.begin(), reference.end(), past.stream.begin()));
}

TEST_CASE("a stop token inside the prompt stops only under run.c's rule", "[generate][eos]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("stories1M.bin"));
  // hf/stories1M's tokenizer.json parses "<s>" in the text as BOS.
  const auto tok = open_tokenizer(test::model_path("hf/stories1M"));
  const Run bos = run(ck, *tok, "Once upon<s> a time", {});
  REQUIRE(bos.result.prompt_tokens.size() > 3);
  CHECK(bos.result.stop_reason == StopReason::bos);
  CHECK(bos.result.generated_tokens.empty());
  const Run eos = run(ck, *tok, "Once upon<s> a time", {1, 2});
  CHECK(eos.result.prompt_tokens == bos.result.prompt_tokens);
  CHECK_FALSE(eos.result.generated_tokens.empty());
}
