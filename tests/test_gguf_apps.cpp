// GGUF files through the apps, with the tokenizer they carry (no -k):
// llama-cli's greedy streams are llama.cpp's (gguf-parity.json), --tokenize,
// --verify-checkpoint and --explain describe the file, llama-compare,
// llama-bench and llama-perplexity take it, and bad files fail with one line.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "compare_run.hpp"
#include "gguf_cases.hpp"
#include "gguf_tiny.hpp"
#include "llama/kernels/dispatch/cpu_features.hpp"
#include "llama/registry.hpp"
#include "perplexity_run.hpp"
#include "test_support.hpp"

using namespace llama;

namespace {

std::vector<std::string> gguf_case_args(const nlohmann::json& c) {
  return {"-c",       test::model_path(c["model"]),
          "-p",       c["prompt"],
          "-t",       "0",
          "-s",       std::to_string(c["steps"].get<int64_t>()),
          "--format", "json"};
}

void one_line_error(const test::ProcessResult& r, const std::string& what) {
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find(what) != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

}  // namespace

TEST_CASE("gguf apps: llama-cli gives llama.cpp's greedy streams with the file's tokenizer",
          "[gguf][cli]") {
  const auto cases = test::runnable_gguf_cases();
  for (const auto& c : cases) {
    const auto stream = c["stream"].get<std::vector<int32_t>>();
    const size_t same =
        c.contains("compare_first") ? c["compare_first"].get<size_t>() : stream.size();
    // Every backend on the K-quant file, the default one on the others.
    std::vector<std::string> backends = {""};
    if (c["name"] == "gguf-rand-k-q4_k_m") backends = BackendRegistry::instance().backend_names();
    for (const std::string& b : backends) {
      INFO(c["name"].get<std::string>() << " on " << (b.empty() ? "the default backend" : b));
      std::vector<std::string> args = gguf_case_args(c);
      if (!b.empty()) args.insert(args.end(), {"-b", b});
      const auto r = test::run_llama_cli(args);
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      const auto j = nlohmann::json::parse(r.out);
      const std::vector<int32_t> ours = test::json_stream(j);
      REQUIRE(ours.size() >= same);
      CHECK(std::vector<int32_t>(ours.begin(), ours.begin() + static_cast<long>(same)) ==
            std::vector<int32_t>(stream.begin(), stream.begin() + static_cast<long>(same)));
      if (!c.contains("compare_first")) CHECK(j["stop_reason"] == "steps");
    }
  }
}

TEST_CASE("gguf apps: llama.cpp's streams at every SIMD level this CPU runs", "[gguf][cpu]") {
  // LLAMA_CPU_LEVEL below avx512 also takes the block kernels to the portable ones.
  const auto levels = test::runnable_levels("gguf streams");
  const auto cases = test::runnable_gguf_cases();
  for (SimdLevel l : levels) {
    const test::ScopedEnv level("LLAMA_CPU_LEVEL", to_string(l));
    for (const char* backend : {"blas", "graph"}) {
      for (const auto& c : cases) {
        INFO(to_string(l) << " " << backend << " " << c["name"].get<std::string>());
        const auto stream = c["stream"].get<std::vector<int32_t>>();
        const size_t same =
            c.contains("compare_first") ? c["compare_first"].get<size_t>() : stream.size();
        std::vector<std::string> args = gguf_case_args(c);
        args.insert(args.end(), {"-b", backend, "-j", "2"});
        const auto r = test::run_llama_cli(args);
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        const std::vector<int32_t> ours = test::json_stream(nlohmann::json::parse(r.out));
        REQUIRE(ours.size() >= same);
        CHECK(std::equal(stream.begin(), stream.begin() + static_cast<long>(same), ours.begin()));
      }
    }
  }
}

TEST_CASE("gguf apps: --tokenize, --verify-checkpoint and --explain on a GGUF", "[gguf][cli]") {
  const std::string q4k = test::model_path("gguf/rand-k.q4_k_m.gguf");
  const auto tok =
      test::run_llama_cli({"-c", q4k, "--tokenize", "-p", "Once upon a time", "--format", "json"});
  INFO(tok.err);
  REQUIRE(tok.exit_code == 0);
  CHECK(nlohmann::json::parse(tok.out)["prompt_tokens"] ==
        std::vector<int32_t>{1, 413, 437, 261, 386});

  const auto v = test::run_llama_cli({"-c", q4k, "--verify-checkpoint"});
  INFO(v.out << v.err);
  CHECK(v.exit_code == 0);
  CHECK(v.out.find("(GGUF v3, alignment 32, 1720800 bytes)") != std::string::npos);
  CHECK(v.out.find("tokenizer: ") != std::string::npos);
  CHECK(v.out.find("2048 tokens, embedded") != std::string::npos);
  CHECK(v.out.find("blk.0.attn_v.weight") != std::string::npos);
  CHECK(v.out.find(" Q4_K ") != std::string::npos);
  CHECK(v.out.find(" Q6_K ") != std::string::npos);
  CHECK(v.out.find("all values finite") != std::string::npos);

  const auto e = test::run_llama_cli({"-c", q4k, "--explain", "-b", "graph"});
  INFO(e.out << e.err);
  CHECK(e.exit_code == 0);
  CHECK(e.out.find("gguf: " + q4k) != std::string::npos);
  CHECK(e.out.find("chat template: none") != std::string::npos);
}

TEST_CASE("gguf apps: --verify-checkpoint and --explain on Q2_K and Q3_K", "[gguf][cli]") {
  // rand-k.q2_k holds Q2_K and Q3_K matrices (and a Q6_K classifier).
  const std::string q2k = test::model_path("gguf/rand-k.q2_k.gguf");
  const auto v = test::run_llama_cli({"-c", q2k, "--verify-checkpoint"});
  INFO(v.out << v.err);
  CHECK(v.exit_code == 0);
  CHECK(v.out.find(" Q2_K ") != std::string::npos);
  CHECK(v.out.find(" Q3_K ") != std::string::npos);
  CHECK(v.out.find("all values finite") != std::string::npos);

  const auto e = test::run_llama_cli({"-c", q2k, "--explain", "-b", "blas"});
  INFO(e.out << e.err);
  CHECK(e.exit_code == 0);
  CHECK(e.out.find("q8_K blocks") != std::string::npos);
}

TEST_CASE("gguf apps: llama-compare and llama-bench take a GGUF", "[gguf][compare]") {
  const std::string q40 = test::model_path("gguf/stories1M.q4_0.gguf");
  std::ostringstream out, err;
  // An f32 KV cache: blas and graph within 1e-4 of each other (both run the
  // core's step kernels before the int8 products; reference's own
  // double-precision steps can put an activation on the other side of an
  // int8 rounding, docs/formats.md "The KV cache").
  const int code =
      compare::run_compare({"-c", q40, "-p", "Once upon a time", "-t", "0", "-s", "40", "-b",
                            "blas,graph", "--kv-cache", "f32"},
                           out, err);
  INFO(out.str() << err.str());
  CHECK(code == 0);
  // One KV cache type per backend: the f16 cache's difference from the f32 one.
  std::ostringstream out2, err2;
  const int code2 = compare::run_compare({"-c", q40, "-p", "Once upon a time", "-t", "0", "-s",
                                          "40", "-b", "blas,blas", "--kv-cache", "f32,f16",
                                          "--tolerance", "1"},
                                         out2, err2);
  INFO(out2.str() << err2.str());
  CHECK(code2 == 0);
  CHECK(out2.str().find("blas (f16 KV cache): max abs diff") != std::string::npos);
  std::ostringstream out3, err3;
  CHECK(compare::run_compare({"-c", q40, "-b", "blas,blas", "--kv-cache", "f32,f16,f16"}, out3,
                             err3) == 2);
  CHECK(err3.str().find("--kv-cache: 3 types for 2 backends") != std::string::npos);

  const auto b = test::run_program(
      LLAMA_BENCH_PATH, {"-c", q40, "-b", "blas", "-p", "8", "-n", "4", "-r", "1", "-j", "1",
                         "--bandwidth-mib", "16", "--sgemm-n", "128", "--format", "json"});
  INFO(b.err);
  REQUIRE(b.exit_code == 0);
  const auto j = nlohmann::json::parse(b.out);
  const auto& model = j["results"][0]["model"];
  CHECK(model["checkpoint"] == q40);
  CHECK(model["config"]["dim"] == 128);
  // The file's tensors as stored: Q4_0 matrices, a Q8_0 classifier (llama-quantize's fallback).
  CHECK(model["weight_bytes"].get<int64_t>() > 800000);
  CHECK(model["weight_bytes"].get<int64_t>() < 998400);
}

TEST_CASE("gguf apps: bad GGUF files fail with one line", "[gguf][cli][robustness]") {
  const auto bytes = test::read_file(test::model_path("gguf/stories1M.q8_0.gguf"));
  const std::string cut = test::temp_path("cut.gguf");
  test::write_file(cut, std::vector<std::byte>(bytes.begin(), bytes.begin() + 100000));
  one_line_error(test::run_llama_cli({"-c", cut, "-p", "x"}), cut + ": ");

  test::TinyLlama spec;
  spec.drop = {"tokenizer.ggml.model", "tokenizer.ggml.tokens", "tokenizer.ggml.scores",
               "tokenizer.ggml.token_type"};
  const std::string bare = test::temp_path("no-tokenizer.gguf");
  test::write_file(bare, test::tiny_llama_gguf(spec));
  one_line_error(test::run_llama_cli({"-c", bare, "-p", "x"}), "holds no tokenizer");
  // With -k the file runs with that tokenizer.
  const auto k = test::run_llama_cli(
      {"-c", bare, "-k", test::model_path("tok2048.bin"), "-p", "x", "-s", "4", "-t", "0"});
  INFO(k.err);
  CHECK(k.exit_code == 0);
}

TEST_CASE("gguf apps: llama-perplexity on stories1M.f32.gguf is stories1M.bin's", "[gguf]") {
  // The same weights and vocabulary (the file's tokenizer against tok2048.bin):
  // the same tokens, chunks and perplexity, up to f32 summation order and
  // ggml's rotary angles, with the f32 KV cache of the .bin (a GGUF's default
  // is llama.cpp's f16 cache).
  const auto text = test::read_file(test::model_path("stories1M-val.txt"));
  const std::string part = test::temp_path("val-part.txt");
  test::write_file(part, std::vector<std::byte>(text.begin(), text.begin() + 20000));
  auto run = [&](const std::vector<std::string>& model) {
    std::vector<std::string> args = model;
    args.insert(args.end(), {"-f", part, "--ctx", "128", "-b", "reference", "--format", "json"});
    std::ostringstream out, err;
    const int code = perplexity_app::run_perplexity(args, out, err);
    INFO(err.str());
    REQUIRE(code == 0);
    return nlohmann::json::parse(out.str());
  };
  const auto g = run({"-c", test::model_path("gguf/stories1M.f32.gguf"), "--kv-cache", "f32"});
  const auto b =
      run({"-c", test::model_path("stories1M.bin"), "-k", test::model_path("tok2048.bin")});
  CHECK(g["text_tokens"] == b["text_tokens"]);
  CHECK(g["chunks"].get<int64_t>() >= 10);
  CHECK(g["scored"] == b["scored"]);
  CHECK(g["perplexity"].get<double>() == Approx(b["perplexity"].get<double>()).epsilon(1e-6));
}
