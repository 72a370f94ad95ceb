// gguf-parity.json on every registered backend: llama.cpp's greedy streams and
// top logits for its own GGUF files (stories1M F32/F16/Q8_0/Q4_0/Q4_1/Q5_0/Q5_1,
// rand-k Q2_K/Q3_K_M/Q4_K_M/Q5_K_M/Q6_K; the cases of types not run yet are checked as refusals by
// runnable_gguf_cases) with the files' default f16 KV cache (llama.cpp's), the prompt
// encoded by the file's own tokenizer, and every file's logits on blas and
// graph against the reference backend's, with an f32 cache and with the f16
// one. LLAMA_PARITY_MEASURE=1 prints each case's measured figures.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "gguf_cases.hpp"
#include "llama/backend.hpp"
#include "llama/formats/gguf_model.hpp"
#include "llama/registry.hpp"
#include "test_support.hpp"

using namespace llama;

namespace {

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const RegistryEntry& e : BackendRegistry::instance().entries()) {
    if (!e.is_wrapper && e.name != "reference") names.push_back(e.name);
  }
  names.insert(names.begin(), "reference");  // first: the others are compared with it
  return names;
}

// Tolerances against llama.cpp's logits, relative to the largest of them:
// issue 16's, 1e-4 for F32 and F16, 1e-3 for Q8_0; the other quantized types run
// llama.cpp's own arithmetic (its activation quantization, integer products and
// scale order: kernels/products/gguf_products.hpp, legacy_products.hpp,
// gguf_kquant.hpp) and are held near what they measure: 1e-6 for Q4_0 and Q5_1,
// 2e-3 for Q4_1 and 5e-3 for Q5_0 (one position where an activation rounds to the
// neighbouring int8 step), 1e-4 for Q4_K_M, 1e-5 for Q5_K_M, Q6_K and Q2_K, 5e-3
// for Q3_K_M (the reference backend's: one activation an int8 step apart, as
// Q4_1's; blas and graph 8.5e-8).
// They hold with llama.cpp's arithmetic where it is a definition: the f16 KV
// cache with ggml's rounding points and sums (kernels/
// steps/f16_cache_attention.hpp) and ggml's rotary angles (RopeAngles::ggml). Worst
// measured, every backend: F32 4.0e-5, F16 1.6e-5, Q8_0 1.6e-7, Q4_0 1.0e-7,
// Q4_K_M 1.6e-5 (reference; blas and graph 3.5e-6), Q5_K_M 2.9e-7, Q6_K 1.1e-7,
// Q3_K_M 3.7e-3 (reference; blas and graph 8.5e-8), Q2_K 2.7e-6 (reference; blas
// and graph 0) (docs/formats.md).
double tolerance(const std::string& file) {
  if (file.find(".f32.") != std::string::npos) return 1e-4;
  if (file.find(".f16.") != std::string::npos) return 1e-4;
  if (file.find(".q8_0.") != std::string::npos) return 1e-3;
  if (file.find(".q4_0.") != std::string::npos) return 1e-6;
  if (file.find(".q5_1.") != std::string::npos) return 1e-6;
  if (file.find(".q4_1.") != std::string::npos) return 2e-3;
  if (file.find(".q5_0.") != std::string::npos) return 5e-3;
  if (file.find(".q4_k_m.") != std::string::npos) return 1e-4;
  if (file.find(".q6_k.") != std::string::npos) return 1e-5;
  if (file.find(".q5_k_m.") != std::string::npos) return 1e-5;
  if (file.find(".q3_k_m.") != std::string::npos) return 5e-3;
  if (file.find(".q2_k.") != std::string::npos) return 1e-5;
  return 3e-2;
}

// The K-quant files (q8_K activations): blas and graph against reference see
// f32_cache_agreement and f16_cache_agreement.
bool kquant_file(const std::string& file) {
  for (const char* t : {".q2_k.", ".q3_k_m.", ".q4_k_m.", ".q5_k_m.", ".q6_k."}) {
    if (file.find(t) != std::string::npos) return true;
  }
  return false;
}

// The files whose products are llama.cpp's own (activation quantization,
// int8 dots, scale order): Q4_0, Q5_0, Q4_1, Q5_1 and the K-quants.
bool llama_cpp_products(const std::string& file) {
  for (const char* t : {".q4_0.", ".q5_0.", ".q4_1.", ".q5_1."}) {
    if (file.find(t) != std::string::npos) return true;
  }
  return kquant_file(file);
}

// How many stream tokens must be llama.cpp's: the case's compare_first where
// our arithmetic is not llama.cpp's, the whole stream where it is (measured: all
// 121 tokens of Q4_0, Q5_0, Q4_1, Q5_1 and all 56 generated tokens of the K-quant
// files, on every backend).
size_t must_match(const nlohmann::json& c) {
  const auto stream = c["stream"].get<std::vector<int32_t>>();
  if (llama_cpp_products(c["model"].get<std::string>())) return stream.size();
  return c.contains("compare_first") ? c["compare_first"].get<size_t>() : stream.size();
}

// blas and graph against reference on the same file. With an f32 cache:
// issue 16's 1e-4 (exact dequantization, f32 sums in another order). With
// the f16 cache the f16 rounding of K, V and the probabilities turns a
// last-bit difference between the backends' f32 sums (reference sums in
// double, blas in sgemv's order) into a whole f16 step (2^-11) of one cached
// value; measured: F32 1.6e-4, F16 3.3e-4.
// The int8 products (Q8_0, Q4_0, Q5_0, Q4_1, Q5_1, the K-quants) are the same sums
// on every backend, but their activations are quantized: a last-bit difference in
// the steps before (reference's own double-precision steps against the kernels')
// can move one value by a whole int8 step, and on rand-k's random weights that
// moves later logits by a few 1e-3. Measured: Q8_0 0 on this prompt (up to 1.1e-2
// on others, llama-compare), Q4_0 6.0e-3, Q5_0 1.1e-2, Q4_1 1.1e-2, Q5_1 below
// 5e-4, Q4_K_M 7.2e-3, Q5_K_M 4.1e-3, Q6_K 2.3e-7, Q3_K_M 7.9e-3, Q2_K 5.3e-3.
// Held to those, so a regression still fails.
double f16_cache_agreement(const std::string& file) {
  if (file.find(".q8_0.") != std::string::npos) return 1e-4;
  if (file.find(".q4_0.") != std::string::npos) return 7e-3;
  if (kquant_file(file)) return 1e-2;
  if (llama_cpp_products(file)) return 1.5e-2;
  return 5e-4;
}

// The same with an f32 KV cache: issue 16's 1e-4, but for the files whose
// activations are quantized (as above; measured: Q8_0 0, Q4_0 1.2e-2, Q5_0
// 0, Q4_1 8.5e-3, Q5_1 1.6e-3, Q6_K 6.2e-3 at its last two positions, every
// earlier one below 1e-5, Q3_K_M 6.0e-3, Q2_K 3.6e-7).
double f32_cache_agreement(const std::string& file) {
  if (kquant_file(file)) return 1e-2;
  if (llama_cpp_products(file)) return 1.5e-2;
  return 1e-4;
}

// The backend's logits along llama.cpp's stream, one forward per position, the
// last token's too (top_logits has the position after the last prediction).
struct Run {
  std::vector<int32_t> argmax;             // at each position
  std::vector<std::vector<float>> logits;  // f32 [positions][vocab_size]
};

Run run_along(const Model& model, const std::string& backend, const std::vector<int32_t>& stream,
              Numerics numerics = Numerics::exact,
              KvCacheOption kv = KvCacheOption::model_default) {
  BackendOptions o;
  o.numerics = numerics;
  o.kv_cache = kv;
  auto b = BackendRegistry::instance().create(backend, o);
  b->prepare(model);
  Run r;
  for (size_t pos = 0; pos < stream.size(); ++pos) {
    const auto l = b->forward(stream[pos], static_cast<int64_t>(pos));
    r.argmax.push_back(static_cast<int32_t>(std::max_element(l.begin(), l.end()) - l.begin()));
    r.logits.emplace_back(l.begin(), l.end());
  }
  return r;
}

}  // namespace

TEST_CASE("gguf parity: llama.cpp's streams and logits on every backend", "[gguf][parity]") {
  const auto cases = test::runnable_gguf_cases();
  const std::vector<std::string> backends = backend_names();
  REQUIRE(backends.size() >= 3);
  for (const auto& c : cases) {
    const std::string file = c["model"].get<std::string>();
    INFO(file);
    const gguf::GgufModel g = gguf::open_model(test::model_path(file));
    REQUIRE(g.tokenizer != nullptr);
    const auto stream = c["stream"].get<std::vector<int32_t>>();
    const auto prompt = c["prompt_tokens"].get<std::vector<int32_t>>();
    CHECK(g.tokenizer->encode(c["prompt"].get<std::string>(), {}) == prompt);
    REQUIRE(c["temperature"].get<double>() == 0);  // greedy: the stream is the argmax
    // Where our greedy stream must be llama.cpp's: all of it, or the case's first tokens.
    const size_t same = must_match(c);
    const Model& model = g.model;
    Run reference;
    for (const std::string& backend : backends) {
      INFO("backend " << backend);
      const Run r = run_along(model, backend, stream);
      // Predictions from the last prompt token on are the generated tokens.
      size_t matched = prompt.size();
      while (matched < stream.size() && r.argmax[matched - 1] == stream[matched]) ++matched;
      double worst_top = 0;
      for (size_t pos = prompt.size() - 1; pos + 1 < same; ++pos) {
        INFO("position " << pos);
        REQUIRE(r.argmax[pos] == stream[pos + 1]);
      }
      for (const auto& [key, top] : c["top_logits"].items()) {
        const size_t pos = prompt.size() - 1 + std::stoul(key);
        INFO("logits at position " << pos);
        REQUIRE(pos < r.logits.size());
        std::vector<float> ours, theirs;
        for (const auto& pair : top) {
          ours.push_back(r.logits[pos][pair[0].get<size_t>()]);
          theirs.push_back(pair[1].get<float>());
        }
        worst_top = std::max(worst_top, test::relative_diff(ours, theirs));
        CHECK(test::relative_diff(ours, theirs) <= tolerance(file));
      }
      if (std::getenv("LLAMA_PARITY_MEASURE") != nullptr) {  // the figures docs/formats.md states
        std::cout << file << " " << backend << ": " << matched << " of " << stream.size()
                  << " stream tokens llama.cpp's, top logits within " << worst_top << "\n";
      }
      if (backend == "reference") {
        reference = r;
        continue;
      }
      double worst = 0;
      for (size_t pos = 0; pos < r.logits.size(); ++pos) {
        worst = std::max(worst, test::relative_diff(r.logits[pos], reference.logits[pos]));
      }
      INFO("worst relative logit difference from reference, f16 cache " << worst);
      if (std::getenv("LLAMA_PARITY_MEASURE") != nullptr) {
        std::cout << file << " " << backend << ": within " << worst << " of reference, f16 cache\n";
      }
      CHECK(worst <= f16_cache_agreement(file));
    }
  }
}

TEST_CASE("gguf parity: blas and graph near reference with an f32 KV cache", "[gguf][parity]") {
  const auto cases = test::runnable_gguf_cases();
  const std::vector<std::string> backends = backend_names();
  REQUIRE(backends.size() >= 3);
  for (const auto& c : cases) {
    const std::string file = c["model"].get<std::string>();
    INFO(file);
    const gguf::GgufModel g = gguf::open_model(test::model_path(file));
    const auto stream = c["stream"].get<std::vector<int32_t>>();
    const Run reference =
        run_along(g.model, "reference", stream, Numerics::exact, KvCacheOption::f32);
    for (size_t i = 1; i < backends.size(); ++i) {
      INFO("backend " << backends[i]);
      const Run r = run_along(g.model, backends[i], stream, Numerics::exact, KvCacheOption::f32);
      double worst = 0;
      for (size_t pos = 0; pos < r.logits.size(); ++pos) {
        worst = std::max(worst, test::relative_diff(r.logits[pos], reference.logits[pos]));
      }
      INFO("worst relative logit difference from reference " << worst);
      if (std::getenv("LLAMA_PARITY_MEASURE") != nullptr) {
        std::cout << file << " " << backends[i] << ": within " << worst
                  << " of reference, f32 cache\n";
      }
      CHECK(worst <= f32_cache_agreement(file));
    }
  }
}

TEST_CASE("gguf parity: numerics fast runs GGUF Q4_0 as exact does", "[gguf][parity]") {
  // Q4_0 has one arithmetic, llama.cpp's, under either policy.
  const gguf::GgufModel g = gguf::open_model(test::model_path("gguf/stories1M.q4_0.gguf"));
  const std::vector<int32_t> stream{1, 413, 437, 261, 386, 1983, 384, 281, 261};
  for (const char* backend : {"reference", "blas", "graph"}) {
    INFO("backend " << backend);
    const Run exact = run_along(g.model, backend, stream);
    const Run fast = run_along(g.model, backend, stream, Numerics::fast);
    for (size_t pos = 0; pos < stream.size(); ++pos) CHECK(fast.logits[pos] == exact.logits[pos]);
  }
}
