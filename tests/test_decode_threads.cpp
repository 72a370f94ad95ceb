// Decode's logits do not depend on the thread count: bf16, f16 and f32
// weights on blas and graph, 1, 2 and 3 threads, bit for bit. Decode splits
// each product's rows across the threads in blocks of whole rows (whole
// 16-row groups for blas's sgemv); a block lost, run twice or split inside a
// row's sum changes the logits.
#include <catch2/catch.hpp>

#include <iostream>
#include <string>
#include <vector>

#include "llama/backend.hpp"
#include "llama/formats/hf_model.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "test_support.hpp"

using namespace llama;

namespace {

// Logits of `steps` decode positions (forward one token at a time).
std::vector<float> decode(const std::string& backend, int threads, const Model& model, int steps) {
  auto b = test::make_backend(backend, threads);
  b->prepare(model);
  std::vector<int32_t> tokens;
  for (int i = 0; i < steps; ++i) tokens.push_back(1 + (i * 37) % 1000);
  return test::sequential_logits(*b, tokens);
}

void check_threads_agree(const Model& model, const std::string& what) {
  for (const char* backend : {"blas", "graph"}) {
    const std::vector<float> one = decode(backend, 1, model, 12);
    for (const int threads : {2, 3}) {
      INFO(what << " on " << backend << ", " << threads << " threads against 1");
      // Several rounds: the split between the threads differs from run to run.
      for (int round = 0; round < 3; ++round) {
        const std::vector<float> many = decode(backend, threads, model, 12);
        REQUIRE(many.size() == one.size());
        CHECK(many == one);
      }
    }
    std::cout << what << " on " << backend << ": decode on 1, 2 and 3 threads compared\n";
  }
}

}  // namespace

TEST_CASE("decode: bf16 logits equal on 1, 2 and 3 threads, blas and graph", "[decode][threads]") {
  const HfModel m = open_hf_model(test::model_path("hf/stories1M-bf16"));
  check_threads_agree(m.model, "stories1M bf16");
}

TEST_CASE("decode: f16 logits equal on 1, 2 and 3 threads, blas and graph", "[decode][threads]") {
  // Its classifier is 32000 x 64: about a hundred chunks per decode product.
  const HfModel m = open_hf_model(test::model_path("hf/rand-mistral-f16"));
  check_threads_agree(m.model, "rand-mistral f16");
}

TEST_CASE("decode: f32 logits equal on 1, 2 and 3 threads, blas and graph", "[decode][threads]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("stories1M.bin"));
  check_threads_agree(ck.model(), "stories1M f32");
}
