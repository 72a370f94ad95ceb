// llama-mkmodel: deterministic bytes, checkpoints that load with the shape
// asked for, weights scaled so a forward pass gives finite, non-degenerate
// logits, and one-line errors for bad flags.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <set>

#include "checkpoint_writer.hpp"
#include "llama/error.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/registry.hpp"
#include "model_shape.hpp"
#include "test_bench_support.hpp"

using namespace llama::test;
using llama::Checkpoint;
using llama::Config;

namespace {

Config small_config(bool shared) { return Config::llama2c(64, 172, 4, 8, 4, 2000, 64, shared); }

}  // namespace

TEST_CASE("same config and seed give the same bytes, another seed differs", "[mkmodel]") {
  const Config c = small_config(false);
  const std::string a = temp_path("mk-a.bin"), b = temp_path("mk-b.bin"),
                    other = temp_path("mk-other.bin");
  llama::bench::write_random_checkpoint(a, c, 7);
  llama::bench::write_random_checkpoint(b, c, 7);
  llama::bench::write_random_checkpoint(other, c, 8);
  const auto bytes_a = read_file(a);
  CHECK(static_cast<int64_t>(bytes_a.size()) == llama::bench::checkpoint_file_bytes(c));
  CHECK(bytes_a == read_file(b));
  const auto bytes_other = read_file(other);
  REQUIRE(bytes_other.size() == bytes_a.size());
  CHECK(bytes_other != bytes_a);
  CHECK_FALSE(std::filesystem::exists(a + ".partial"));

  // The executable writes the same bytes as the library.
  const std::string cli = temp_path("mk-cli.bin");
  const auto r = run_mkmodel({"-o",       cli,    "--dim",   "64", "--hidden",     "172",
                              "--layers", "4",    "--heads", "8",  "--kv-heads",   "4",
                              "--vocab",  "2000", "--seq",   "64", "--classifier", "separate",
                              "--seed",   "7"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(read_file(cli) == bytes_a);
}

TEST_CASE("generated checkpoints load with the requested shape", "[mkmodel]") {
  for (bool shared : {true, false}) {
    const Config c = small_config(shared);
    const std::string path = temp_path(shared ? "mk-shared.bin" : "mk-separate.bin");
    llama::bench::write_random_checkpoint(path, c, 1);
    const Checkpoint ck = Checkpoint::open(path);
    const Config& got = ck.config();
    CHECK(got.dim == c.dim);
    CHECK(got.hidden_dim == c.hidden_dim);
    CHECK(got.n_layers == c.n_layers);
    CHECK(got.n_heads == c.n_heads);
    CHECK(got.n_kv_heads == c.n_kv_heads);
    CHECK(got.vocab_size == c.vocab_size);
    CHECK(got.seq_len == c.seq_len);
    CHECK(got.shared_classifier == shared);
    CHECK(ck.file_size() == llama::bench::checkpoint_file_bytes(c));
    CHECK(ck.model().weights.tied() == shared);
    for (const llama::TensorInfo& t : ck.tensors()) {
      INFO(t.name);
      CHECK(std::all_of(t.data.begin(), t.data.end(), [](float v) { return std::isfinite(v); }));
      if (t.name.rfind("rms", 0) == 0) {
        CHECK(std::all_of(t.data.begin(), t.data.end(), [](float v) { return v == 1.0f; }));
      } else {
        // Random tensors: many distinct values, mean near zero.
        std::set<float> distinct(t.data.begin(),
                                 t.data.begin() + std::min<size_t>(t.data.size(), 500));
        CHECK(distinct.size() > 400);
        double sum = 0, sq = 0;
        for (float v : t.data) {
          sum += v;
          sq += static_cast<double>(v) * v;
        }
        const double n = static_cast<double>(t.data.size());
        CHECK(std::abs(sum / n) < 0.1 * std::sqrt(sq / n));
      }
    }
  }
}

TEST_CASE("named shapes match the peer figures", "[mkmodel]") {
  using llama::bench::checkpoint_file_bytes;
  using llama::bench::shape_by_name;
  const Config m15 = shape_by_name("15M");
  CHECK(m15.dim == 288);
  CHECK(m15.hidden_dim == 768);
  CHECK(m15.n_layers == 6);
  CHECK(checkpoint_file_bytes(m15) == 60816028);  // 61 MB in peers.md
  const Config m110 = shape_by_name("110m");
  CHECK(m110.dim == 768);
  CHECK(m110.n_layers == 12);
  CHECK(std::abs(static_cast<double>(checkpoint_file_bytes(m110)) - 438e6) < 1e6);
  const Config m340 = shape_by_name("340M");
  CHECK(m340.hidden_dim == 2816);
  CHECK(m340.n_layers == 24);
  CHECK(std::abs(static_cast<double>(checkpoint_file_bytes(m340)) - 1.36e9) < 0.01e9);
  const Config b1 = shape_by_name("1b");
  CHECK(b1.dim == 2048);
  CHECK(b1.hidden_dim == 5632);
  CHECK(b1.n_layers == 22);
  CHECK(b1.n_heads == 32);
  CHECK(b1.n_kv_heads == 4);
  CHECK(b1.seq_len == 2048);
  CHECK_FALSE(b1.shared_classifier);
  CHECK(std::abs(static_cast<double>(checkpoint_file_bytes(b1)) - 4.4e9) < 0.1e9);
  CHECK_THROWS_AS(shape_by_name("7b"), llama::Error);

  // The 15M shape through the executable: loads as 15M.
  const std::string path = temp_path("mk-15M.bin");
  const auto r = run_mkmodel({"-s", "15M", "-o", path});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(Checkpoint::open(path).config().to_string() == m15.to_string());
}

TEST_CASE("random weights give finite, non-degenerate logits", "[mkmodel]") {
  // The reference backend (double accumulation) over a deep-ish model.
  Config c = small_config(true);
  c.n_layers = 12;
  const std::string path = temp_path("mk-forward.bin");
  llama::bench::write_random_checkpoint(path, c, 3);
  const Checkpoint ck = Checkpoint::open(path);
  auto backend = llama::BackendRegistry::instance().create("reference");
  backend->prepare(ck.model());
  std::set<int32_t> argmaxes;
  int32_t token = 1;
  for (int64_t pos = 0; pos < 24; ++pos) {
    const auto logits = backend->forward(token, pos);
    REQUIRE(std::all_of(logits.begin(), logits.end(), [](float v) { return std::isfinite(v); }));
    double mean = 0;
    for (float v : logits) mean += v;
    mean /= static_cast<double>(logits.size());
    double var = 0, max_logit = -1e30, denom = 0;
    for (float v : logits) {
      var += (v - mean) * (v - mean);
      max_logit = std::max(max_logit, static_cast<double>(v));
    }
    const double stddev = std::sqrt(var / static_cast<double>(logits.size()));
    for (float v : logits) denom += std::exp(v - max_logit);
    INFO("pos " << pos << " logit std " << stddev << " top probability " << 1 / denom);
    CHECK(stddev > 0.5);
    CHECK(stddev < 8.0);
    CHECK(1.0 / denom < 0.5);  // the softmax is not one-hot
    token = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    argmaxes.insert(token);
  }
  CHECK(argmaxes.size() > 4);  // greedy decoding does not lock onto one token
}

TEST_CASE("llama-mkmodel refuses bad flags with one line", "[mkmodel]") {
  const std::string out = temp_path("mk-bad.bin");
  check_one_line_error(run_mkmodel({"-s", "15M"}), "llama-mkmodel", 2, "--output");
  check_one_line_error(run_mkmodel({"-o", out, "-s", "7b"}), "llama-mkmodel", 2, "unknown shape");
  check_one_line_error(run_mkmodel({"-o", out, "--dim", "64"}), "llama-mkmodel", 2,
                       "required without --shape");
  check_one_line_error(run_mkmodel({"-o", out, "-s", "15M", "--dim", "0"}), "llama-mkmodel", 2,
                       "--dim");
  check_one_line_error(run_mkmodel({"-o", out, "-s", "15M", "--heads", "7"}), "llama-mkmodel", 2,
                       "not divisible");
  check_one_line_error(run_mkmodel({"-o", out, "-s", "15M", "--kv-heads", "4"}), "llama-mkmodel", 2,
                       "multiple of n_kv_heads");
  check_one_line_error(run_mkmodel({"-o", out, "-s", "15M", "--classifier", "both"}),
                       "llama-mkmodel", 2, "--classifier");
  check_one_line_error(run_mkmodel({"-o", out, "-s", "15M", "--seed", "-1"}), "llama-mkmodel", 2,
                       "--seed");
  check_one_line_error(run_mkmodel({"-o", out, "-s", "15M", "--dim", "abc"}), "llama-mkmodel", 2,
                       "dim");
  check_one_line_error(run_mkmodel({"-o", out, "--bogus"}), "llama-mkmodel", 2, "bogus");
  check_one_line_error(run_mkmodel({"-o", out, "-s", "15M", "--vocab", "99999999999"}),
                       "llama-mkmodel", 2, "--vocab");
  // I/O failure: a directory that does not exist.
  check_one_line_error(run_mkmodel({"-o", temp_path("no-such-dir/x.bin"), "-s", "15M"}),
                       "llama-mkmodel", 1, "cannot create");
  CHECK_FALSE(std::filesystem::exists(out));
}
