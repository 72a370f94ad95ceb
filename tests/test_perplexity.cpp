// Perplexity (llama.cpp's llama-perplexity semantics): the core function
// against a direct computation, the reference figure of perplexity.json on
// every backend through llama-perplexity, and its one-line errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <sstream>

#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/perplexity.hpp"
#include "llama/registry.hpp"
#include "llama/tokenizers/llama2c_tokenizer.hpp"
#include "perplexity_run.hpp"
#include "test_support.hpp"

using namespace llama;

namespace {

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const RegistryEntry& e : BackendRegistry::instance().entries()) {
    if (!e.is_wrapper) names.push_back(e.name);
  }
  return names;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Run {
  int code;
  std::string out, err;
};

Run run(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = perplexity_app::run_perplexity(args, out, err);
  return {code, out.str(), err.str()};
}

std::string file(const std::string& name, const std::string& text) {
  const std::string path = test::temp_path(name);
  const auto* p = reinterpret_cast<const std::byte*>(text.data());
  test::write_file(path, std::vector<std::byte>(p, p + text.size()));
  return path;
}

}  // namespace

TEST_CASE("perplexity equals a direct count over the chunks' second halves", "[perplexity]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("stories1M.bin"));
  const Llama2cTokenizer tok(test::model_path("tok2048.bin"), ck.config().vocab_size);
  const std::string text = slurp(test::model_path("stories1M-val.txt")).substr(0, 3000);
  const std::vector<int32_t> tokens = tok.encode(text, true, false);
  const int64_t ctx = 64;
  REQUIRE(static_cast<int64_t>(tokens.size()) > 5 * ctx);
  // Directly: one forward per position on the reference backend, log-softmax in long double.
  auto ref = test::make_backend("reference");
  ref->prepare(ck.model());
  const int64_t chunks = static_cast<int64_t>(tokens.size()) / ctx;
  long double sum = 0;
  int64_t scored = 0;
  for (int64_t c = 0; c < chunks; ++c) {
    std::vector<int32_t> chunk(tokens.begin() + c * ctx, tokens.begin() + (c + 1) * ctx);
    chunk[0] = kBosToken;
    for (int64_t j = 0; j + 1 < ctx; ++j) {
      const std::span<const float> logits = ref->forward(chunk[static_cast<size_t>(j)], j);
      if (j < ctx / 2) continue;
      long double z = 0;
      for (float l : logits) z += std::exp(static_cast<long double>(l));
      sum -=
          std::log(std::exp(static_cast<long double>(
                       logits[static_cast<size_t>(tokens[static_cast<size_t>(c * ctx + j + 1)])])) /
                   z);
      ++scored;
    }
  }
  const double want = std::exp(static_cast<double>(sum / scored));
  for (const std::string& name : backend_names()) {
    INFO(name);
    auto backend = test::make_backend(name);
    backend->prepare(ck.model());
    int64_t calls = 0;
    const PerplexityResult r =
        perplexity(*backend, ck.config(), tokens, {ctx}, [&](int64_t done, int64_t total, double) {
          CHECK(done == ++calls);
          CHECK(total == chunks);
        });
    CHECK(r.chunks == chunks);
    CHECK(r.scored == scored);
    CHECK(r.scored == chunks * (ctx - 1 - ctx / 2));
    CHECK(calls == chunks);
    CHECK(std::abs(r.perplexity - want) / want < 1e-5);
    CHECK(r.nll_stderr > 0);
    CHECK(r.perplexity_stderr == Approx(r.perplexity * r.nll_stderr));
  }
}

TEST_CASE("perplexity refuses a short text and a bad ctx", "[perplexity]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("stories1M.bin"));
  auto backend = test::make_backend("reference");
  backend->prepare(ck.model());
  const std::vector<int32_t> tokens(300, 5);
  CHECK_THROWS_WITH(
      perplexity(*backend, ck.config(), tokens, {256}),
      "the text has 300 tokens; perplexity with ctx 256 needs at least 512 (two chunks)");
  CHECK_THROWS_WITH(perplexity(*backend, ck.config(), tokens, {257}),
                    "ctx 257 is larger than the model's context (seq_len 256)");
  CHECK_THROWS_WITH(perplexity(*backend, ck.config(), tokens, {1}),
                    "ctx must be at least 2, got 1");
  CHECK(default_perplexity_ctx(ck.config()) == 256);
}

TEST_CASE("llama-perplexity: bad input is one line and a non-zero exit", "[perplexity]") {
  const std::string model = test::model_path("stories1M.bin");
  const std::string tok = test::model_path("tok2048.bin");
  const std::string story = file("short.txt", "Once upon a time, there was a cat.\n");
  const std::string empty = file("empty.txt", "");
  struct Bad {
    std::vector<std::string> args;
    int code;
    std::string err;
  };
  const std::vector<Bad> cases = {
      {{"-c", model, "-k", tok}, 2, "llama-perplexity: --file: required (-f TEXT) (see --help)\n"},
      {{"-f", story}, 2, "llama-perplexity: --checkpoint: required (-c FILE) (see --help)\n"},
      {{"-c", model, "-k", tok, "-f", story, "--ctx", "1"},
       2,
       "llama-perplexity: --ctx: must be at least 2, got 1 (see --help)\n"},
      {{"-c", model, "-k", tok, "-f", story, "--format", "xml"},
       2,
       "llama-perplexity: --format: must be text or json, got 'xml' (see --help)\n"},
      {{"-c", model, "-k", tok, "-f", story, "--ctx", "1024"},
       1,
       "llama-perplexity: --ctx: 1024 is larger than the model's context (seq_len 256)\n"},
      {{"-c", model, "-k", tok, "-f", empty},
       1,
       "llama-perplexity: --file: " + empty + ": the text is empty\n"},
      {{"-c", model, "-k", tok, "-f", "/nonexistent.txt"},
       1,
       "llama-perplexity: --file: /nonexistent.txt: cannot open: No such file or directory\n"},
      {{"-c", model, "-k", tok, "-f", story},
       1,
       "llama-perplexity: " + story +
           ": the text has 12 tokens; perplexity with ctx 256 needs at least 512 (two chunks)\n"},
      {{"-c", model, "-k", tok, "-f", story, "-b", "nosuch"}, 1, ""},
  };
  for (const Bad& b : cases) {
    std::string cmd;
    for (const auto& a : b.args) cmd += a + " ";
    INFO(cmd);
    const Run r = run(b.args);
    CHECK(r.code == b.code);
    CHECK(r.out.empty());
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.starts_with("llama-perplexity: "));
    if (!b.err.empty()) CHECK(r.err == b.err);
  }
}

namespace {

// perplexity.json's case through llama-perplexity on `backend`.
void check_reference_perplexity(const std::string& backend) {
  const auto cases = test::load_json(test::reference_path("perplexity.json"));
  REQUIRE(cases.size() == 1);
  const auto& c = cases[0];
  const Run r = run({"-c", test::model_path(c["model"]), "-k", test::model_path(c["tokenizer"]),
                     "-f", test::model_path(c["text"]), "--ctx",
                     std::to_string(c["ctx"].get<int64_t>()), "-b", backend, "--format", "json"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["text_tokens"] == c["text_tokens"]);
  CHECK(j["chunks"] == c["chunks"]);
  CHECK(j["scored"] == c["scored"]);
  const double want = c["perplexity"].get<double>();
  CHECK(std::abs(j["perplexity"].get<double>() - want) / want < 1e-4);
  CHECK(std::abs(j["mean_nll"].get<double>() - c["mean_nll"].get<double>()) < 1e-4);
  // llama.cpp's standard error divides the variance by n - 1, the reference's by n.
  CHECK(j["nll_stderr"].get<double>() == Approx(c["nll_stderr"].get<double>()).epsilon(1e-3));
  // Progress went to stderr, one line per tenth of the chunks.
  CHECK(r.err.find("llama-perplexity: chunk 232/232, perplexity 14.78") != std::string::npos);
}

}  // namespace

// One test case per backend so CTest runs them side by side.
TEST_CASE("llama-perplexity gives perplexity.json's figure on blas", "[perplexity][parity]") {
  check_reference_perplexity("blas");
}
TEST_CASE("llama-perplexity gives perplexity.json's figure on graph", "[perplexity][parity]") {
  check_reference_perplexity("graph");
}
TEST_CASE("llama-perplexity gives perplexity.json's figure on reference", "[perplexity][parity]") {
  check_reference_perplexity("reference");
}
TEST_CASE("the perplexity.json cases above cover every registered backend", "[perplexity]") {
  CHECK(backend_names() == std::vector<std::string>{"blas", "graph", "reference"});
}
