// Hugging Face directories through the apps: llama-cli generates hf-parity.json's
// streams with the directory's tokenizer.json and EOS ids on every backend,
// describes the checkpoint (--verify-checkpoint, --explain), bounds the KV cache
// (--ctx-size); llama-compare and llama-perplexity take the directory too.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compare_run.hpp"
#include "perplexity_run.hpp"
#include "test_support.hpp"

using namespace llama;
using Catch::Contains;
namespace fs = std::filesystem;

namespace {

const nlohmann::json& hf_case(const std::string& name) {
  static const nlohmann::json cases = test::load_json(test::reference_path("hf-parity.json"));
  for (const nlohmann::json& c : cases) {
    if (c["name"] == name) return c;
  }
  FAIL("hf-parity.json has no case " << name);
  throw;
}

// llama-cli --format json on a case, with no -k: the directory's tokenizer.json.
test::ProcessResult run_case(const nlohmann::json& c, const std::string& checkpoint,
                             const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"-c",       checkpoint,
                                   "-p",       c["prompt"],
                                   "-t",       std::to_string(c["temperature"].get<double>()),
                                   "--top-p",  std::to_string(c["top_p"].get<double>()),
                                   "-r",       std::to_string(c["seed"].get<int64_t>()),
                                   "-s",       std::to_string(c["steps"].get<int64_t>()),
                                   "--format", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  return test::run_llama_cli(args);
}

// A copy of hf/stories1M whose config.json says `context` positions (the
// weights and tokenizer linked, not copied).
std::string long_context_copy(int64_t context) {
  const fs::path src = test::model_path("hf/stories1M");
  const fs::path dir = test::temp_path("long-context-" + std::to_string(context));
  fs::create_directories(dir);
  for (const char* f :
       {"model.safetensors", "tokenizer.json", "tokenizer_config.json", "generation_config.json"}) {
    if (!fs::exists(dir / f)) fs::create_symlink(src / f, dir / f);
  }
  nlohmann::json config = test::load_json((src / "config.json").string());
  config["max_position_embeddings"] = context;
  std::ofstream(dir / "config.json") << config.dump();
  return dir.string();
}

}  // namespace

TEST_CASE("llama-cli -c DIR generates hf-parity.json's streams on every backend", "[hf][cli]") {
  const std::string backend = GENERATE(as<std::string>{}, "reference", "blas", "graph");
  for (const char* name : {"s1m-hf-prompt", "s1m-bf16-topp", "llama3-greedy", "mistral-greedy"}) {
    const nlohmann::json& c = hf_case(name);
    INFO(backend << " " << name);
    const test::ProcessResult r = run_case(c, test::model_path(c["model"]), {"-b", backend});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    CHECK(test::json_stream(j) == c["stream"].get<std::vector<int32_t>>());
    CHECK(j["stop_reason"] == c["stop_reason"]);
  }
}

TEST_CASE("llama-cli takes an HF directory's model.safetensors as well", "[hf][cli]") {
  const nlohmann::json& c = hf_case("s1m-hf-greedy");
  const test::ProcessResult r =
      run_case(c, test::model_path("hf/stories1M") + "/model.safetensors", {});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(test::json_stream(j) == c["stream"].get<std::vector<int32_t>>());
  CHECK(j["stop_reason"] == "eos");
  // --ignore-eos: the story goes on past the EOS (BOS) the model samples.
  const test::ProcessResult on = run_case(c, test::model_path("hf/stories1M"), {"--ignore-eos"});
  REQUIRE(on.exit_code == 0);
  // run.c: steps positions, and the token sampled at the last one.
  CHECK(test::json_stream(nlohmann::json::parse(on.out)).size() == 201);
}

TEST_CASE("llama-cli --verify-checkpoint describes an HF checkpoint tensor by tensor",
          "[hf][cli]") {
  const test::ProcessResult r =
      test::run_llama_cli({"-c", test::model_path("hf/rand-mistral-f16"), "--verify-checkpoint"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("MistralForCausalLM"));
  CHECK_THAT(r.out, Contains("2 file(s)"));
  CHECK_THAT(r.out, Contains("untied"));
  CHECK_THAT(r.out, Contains("model.layers.1.self_attn.k_proj.weight"));
  CHECK_THAT(r.out, Contains(" F16 "));
  CHECK_THAT(r.out, Contains("lm_head.weight"));
  CHECK_THAT(r.out, Contains("all values finite"));
}

TEST_CASE("llama-cli --explain names the rope, heads, dtype and copies of an HF model",
          "[hf][cli]") {
  const test::ProcessResult r = test::run_llama_cli(
      {"-c", test::model_path("hf/rand-llama3"), "--explain", "-b", "graph", "-p", "x"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("rope_scaling llama3 (factor 8"));
  CHECK_THAT(r.out, Contains("4 heads x head_dim 32 (q 128)"));
  CHECK_THAT(r.out, Contains("rope layout halves"));
  CHECK_THAT(r.out, Contains("classifier tied to the embedding"));
  CHECK_THAT(r.out, Contains("eos [128001, 128009] (generation_config.json)"));
}

TEST_CASE("llama-cli --ctx-size bounds an HF model's KV cache; the default caps it at 4096",
          "[hf][cli]") {
  const std::string dir = long_context_copy(131072);
  const auto explain = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"-c", dir, "--explain", "-b", "reference"};
    args.insert(args.end(), extra.begin(), extra.end());
    return test::run_llama_cli(args);
  };
  const test::ProcessResult d = explain({});
  INFO(d.err);
  REQUIRE(d.exit_code == 0);
  CHECK_THAT(d.out, Contains("seq_len=4096 ") && Contains("context_length=131072"));
  const test::ProcessResult big = explain({"--ctx-size", "8192"});
  REQUIRE(big.exit_code == 0);
  CHECK_THAT(big.out, Contains("seq_len=8192 "));
  const test::ProcessResult over = explain({"--ctx-size", "131073"});
  CHECK(over.exit_code == 1);
  CHECK_THAT(over.err, Contains("--ctx-size: 131073 is larger than the model's context "
                                "(max_position_embeddings 131072)"));
}

TEST_CASE("llama-compare runs an HF directory on every backend", "[hf][compare]") {
  const nlohmann::json& c = hf_case("llama3-multinomial");
  std::ostringstream out, err;
  const int code = compare::run_compare(
      {"-c", test::model_path("hf/rand-llama3"), "-p", c["prompt"], "-t", "1.2", "--top-p", "0",
       "-r", "4", "-s", "40", "-b", "reference,blas,graph", "--format", "json"},
      out, err);
  INFO(err.str());
  REQUIRE(code == 0);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  INFO(j.dump());
  CHECK(j["stream"] == c["stream"]);
}

TEST_CASE("llama-perplexity reads an HF directory as its llama2.c twin", "[hf][perplexity]") {
  // The first 24 KB of the held-out stories.
  std::ifstream in(test::model_path("stories1M-val.txt"), std::ios::binary);
  std::string text(24 * 1024, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  const std::string file = test::temp_path("val-24k.txt");
  std::ofstream(file, std::ios::binary) << text;
  const auto ppl = [&](std::vector<std::string> model) {
    std::ostringstream out, err;
    model.insert(model.end(), {"-f", file, "--ctx", "128", "-b", "blas", "--format", "json"});
    const int code = perplexity_app::run_perplexity(model, out, err, false);
    INFO(err.str());
    REQUIRE(code == 0);
    return nlohmann::json::parse(out.str());
  };
  const nlohmann::json hf = ppl({"-c", test::model_path("hf/stories1M")});
  const nlohmann::json bin =
      ppl({"-c", test::model_path("stories1M.bin"), "-k", test::model_path("tok2048.bin")});
  CHECK(hf["scored"] == bin["scored"]);
  CHECK(hf["perplexity"].get<double>() == Approx(bin["perplexity"].get<double>()).epsilon(1e-6));
}
