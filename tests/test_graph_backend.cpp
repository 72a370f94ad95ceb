// The graph backend end to end: run.c's streams for every parity case (library
// and llama-cli), logits against the BLAS backend, threads, batches, --explain
// and bad input.
#include <catch2/catch.hpp>
#include <cmath>

#include "graph/graph_backend.hpp"
#include "llama/error.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/generate.hpp"
#include "llama/registry.hpp"
#include "test_support.hpp"

using namespace llama;
using Catch::Matchers::Contains;

namespace {

std::vector<int32_t> run_case(const nlohmann::json& c, int threads) {
  const Checkpoint ck = Checkpoint::open(test::model_path(c["model"].get<std::string>()));
  const auto r = test::generate_case(ck, c, "graph", threads);
  CHECK(r.stopped_at_bos == c["stopped_at_bos"].get<bool>());
  return r.stream;
}

}  // namespace

TEST_CASE("graph: every parity case gives run.c's stream, on 1 and 2 threads", "[graph][parity]") {
  const auto cases = test::load_json(test::reference_path("parity.json"));
  REQUIRE(cases.size() >= 3);
  for (const auto& c : cases) {
    INFO("case " << c["name"].get<std::string>());
    const auto want = c["stream"].get<std::vector<int32_t>>();
    CHECK(run_case(c, 1) == want);
    CHECK(run_case(c, 2) == want);
  }
}

TEST_CASE("graph: logits within 1e-4 of blas at every position of the parity cases",
          "[graph][parity]") {
  for (const auto& c : test::load_json(test::reference_path("parity.json"))) {
    INFO("case " << c["name"].get<std::string>());
    const Checkpoint ck = Checkpoint::open(test::model_path(c["model"].get<std::string>()));
    const test::LogitAgreement a = test::compare_along_case(ck, c, "graph", "blas");
    INFO("worst at position " << a.worst_position);
    REQUIRE(a.max_diff < 1e-4);
  }
}

// Batches run their products in f32 (like blas's sgemm), decode in double: the
// logits agree to the tolerance of blas's batch test, not bit for bit.
TEST_CASE("graph: batches agree with sequential calls, prepare restarts", "[graph]") {
  for (const char* file : {"stories260K.bin", "rand-gqa.bin"}) {
    INFO(file);
    const Checkpoint ck = Checkpoint::open(test::model_path(file));
    // More than one chunk of the batch plans, and a partial chunk at the end.
    const int64_t n = ck.config().seq_len - 3;
    REQUIRE(n > graph::GraphBackend::kBatchTokens);
    REQUIRE(n % graph::GraphBackend::kBatchTokens != 0);
    std::vector<int32_t> tokens;
    for (int64_t i = 0; i < n; ++i) tokens.push_back(static_cast<int32_t>((i * 37 + 1) % 500));
    auto one = test::make_backend("graph", 1);
    one->prepare(ck.model());
    const std::vector<float> sequential = test::sequential_logits(*one, tokens);
    one->prepare(ck.model());  // starts over
    const auto batch = one->forward_batch(tokens, 0, /*all_logits=*/true);
    REQUIRE(batch.size() == sequential.size());
    CHECK(test::relative_diff(batch, sequential) < 1e-5);

    // Prompt in a batch on 2 threads, then one more position: same as sequential.
    auto two = test::make_backend("graph", 2);
    two->prepare(ck.model());
    const std::span<const int32_t> head(tokens.data(), tokens.size() - 1);
    const auto last_of_head = two->forward_batch(head, 0);
    const size_t vocab = static_cast<size_t>(ck.config().vocab_size);
    const std::span<const float> seq_head_last(sequential.data() + sequential.size() - 2 * vocab,
                                               vocab);
    CHECK(test::relative_diff(last_of_head, seq_head_last) < 1e-5);
    const auto next = two->forward(tokens.back(), static_cast<int64_t>(tokens.size()) - 1);
    const std::span<const float> seq_last(sequential.data() + sequential.size() - vocab, vocab);
    CHECK(test::relative_diff(next, seq_last) < 1e-5);

    // The batch itself does not depend on the thread count.
    two->prepare(ck.model());
    const auto batch_two = two->forward_batch(tokens, 0, /*all_logits=*/true);
    CHECK(std::equal(batch_two.begin(), batch_two.end(), batch.begin()));
  }
}

TEST_CASE("graph: describe prints the compiled plans", "[graph]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("stories260K.bin"));
  auto graph = test::make_backend("graph");
  CHECK_THAT(graph->describe(), Contains("not prepared"));
  graph->prepare(ck.model());
  const std::string d = graph->describe();
  CHECK_THAT(d, Contains("plan attention_in") && Contains("plan feed_forward") &&
                    Contains("plan classifier"));
  CHECK_THAT(d, Contains("= matvec wqkv[128x64], %2 : [128]"));
  CHECK_THAT(d, Contains("matvec_add wo[64x64]") && Contains("swiglu"));
  CHECK_THAT(d, Contains("arena ") && Contains(" B of values") && Contains("KV cache"));
}

TEST_CASE("graph refuses bad positions, tokens and thread counts", "[graph][bad-input]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("rand-gqa.bin"));
  auto graph = test::make_backend("graph");
  CHECK_THROWS_AS(graph->forward(1, 0), Error);  // before prepare
  CHECK_THROWS_AS(graph->forward_batch(std::vector<int32_t>{1, 2}, 0), Error);
  graph->prepare(ck.model());
  CHECK_THROWS_WITH(graph->forward(1, ck.config().seq_len), Contains("seq_len"));
  CHECK_THROWS_WITH(graph->forward(-1, 0), Contains("vocabulary"));
  CHECK_THROWS_WITH(graph->forward(512, 0), Contains("vocabulary"));
  CHECK_THROWS_AS(graph->forward_batch(std::vector<int32_t>{}, 0), Error);
  CHECK_THROWS_WITH(graph->forward_batch(std::vector<int32_t>{1, 2}, ck.config().seq_len - 1),
                    Contains("seq_len"));
  CHECK_THROWS_AS(test::make_backend("graph", -1), Error);
}

TEST_CASE("llama-cli -b graph --format json reproduces every parity case", "[graph][cli]") {
  for (const auto& c : test::load_json(test::reference_path("parity.json"))) {
    INFO(c["name"].get<std::string>());
    const auto r = test::run_llama_cli_case(c, {"-b", "graph"});
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(test::json_stream(j) == c["stream"].get<std::vector<int32_t>>());
    CHECK(j["backend"] == "graph");
  }
  const auto e =
      test::run_llama_cli({"-c", test::model_path("rand-gqa.bin"), "-k",
                           test::model_path("tokenizer.bin"), "-b", "graph", "--explain"});
  CHECK(e.exit_code == 0);
  CHECK_THAT(e.out, Contains("= matvec wqkv[") && Contains("arena "));
}
