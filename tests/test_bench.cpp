// llama-bench end to end on a tiny model (every JSON field present and
// consistent, CSV, markdown, plot), its statistics and cost model, and
// one-line errors for bad flags. No timing assertions.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <set>
#include <sstream>

#include "llama/formats/llama2c_checkpoint.hpp"
#include "model_cost.hpp"
#include "report.hpp"
#include "stats.hpp"
#include "test_bench_support.hpp"

using namespace llama::test;
using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

// Small rooflines keep the test quick; the figures themselves are not checked.
const std::vector<std::string> kQuickRooflines{"--bandwidth-mib", "16", "--sgemm-n", "128"};

std::vector<std::string> with_quick(std::vector<std::string> args) {
  args.insert(args.end(), kQuickRooflines.begin(), kQuickRooflines.end());
  return args;
}

void check_summary(const json& s) {
  REQUIRE(s.is_object());
  CHECK(s["min"].get<double>() > 0);
  CHECK(s["min"].get<double>() <= s["median"].get<double>());
  CHECK(s["median"].get<double>() <= s["max"].get<double>());
}

void check_decode(const json& d, int64_t tokens, int64_t depth) {
  REQUIRE(d.is_object());
  CHECK(d["tokens"] == tokens);
  CHECK(d["depth"] == depth);
  check_summary(d["tok_per_s"]);
  CHECK(d["ms_per_token"]["p50"].get<double>() > 0);
  CHECK(d["ms_per_token"]["p50"].get<double>() <= d["ms_per_token"]["p99"].get<double>());
  CHECK(d["bytes_per_token"].get<double>() > 0);
  CHECK(d["roofline_tok_per_s"].get<double>() > 0);
  CHECK(d["bandwidth_fraction"].get<double>() ==
        Approx(d["tok_per_s"]["median"].get<double>() / d["roofline_tok_per_s"].get<double>()));
}

}  // namespace

TEST_CASE("llama-bench runs a tiny model end to end and its JSON has every field", "[bench]") {
  const std::string model = model_path("stories260K.bin");
  const auto r = run_bench(with_quick({"-c", model, "-b", "blas,reference", "-p", "8", "-n", "6",
                                       "-d", "20", "-r", "2", "-j", "1,2", "--format", "json"}));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j["program"] == "llama-bench");
  CHECK(j["version"].is_string());
  const json& st = j["settings"];
  CHECK(st["checkpoints"] == std::vector<std::string>{model});
  CHECK(st["backends"] == std::vector<std::string>{"blas", "reference"});
  CHECK(st["threads"] == std::vector<int>{1, 2});
  CHECK(st["prompt_tokens"] == 8);
  CHECK(st["decode_tokens"] == 6);
  CHECK(st["depth"] == 20);
  CHECK(st["repetitions"] == 2);
  CHECK(st["warmup"] == 1);
  CHECK(j["machine"]["cpu"].is_string());
  CHECK(j["machine"]["cores"].get<int>() >= 1);
  CHECK(j["machine"]["openblas_core"].is_string());
  CHECK(j["notes"].empty());

  REQUIRE(j["rooflines"].size() == 2);
  for (const json& roof : j["rooflines"]) {
    CHECK(roof["bandwidth_gbps"].get<double>() > 0);
    CHECK(roof["bandwidth_median_gbps"].get<double>() <= roof["bandwidth_gbps"].get<double>());
    CHECK(roof["bandwidth_buffer_bytes"] == 16 * 1024 * 1024);
    CHECK(roof["sgemm_gflops"].get<double>() > 0);
    CHECK(roof["sgemm_median_gflops"].get<double>() <= roof["sgemm_gflops"].get<double>());
    CHECK(roof["sgemm_n"] == 128);
  }
  CHECK(j["rooflines"][0]["threads"] == 1);
  CHECK(j["rooflines"][1]["threads"] == 2);

  const llama::Checkpoint ck = llama::Checkpoint::open(model);
  const auto cost = llama::bench::ModelCost::of(ck.model());
  REQUIRE(j["results"].size() == 4);
  std::set<std::pair<std::string, int>> seen;
  for (const json& res : j["results"]) {
    INFO(res.dump());
    seen.insert({res["backend"].get<std::string>(), res["threads"].get<int>()});
    CHECK(res["status"] == "ok");
    CHECK(res["error"].is_null());
    CHECK(res["backend_name"] == res["backend"]);
    const json& m = res["model"];
    CHECK(m["checkpoint"] == model);
    CHECK(m["name"] == "stories260K");
    CHECK(m["config"]["dim"] == 64);
    CHECK(m["config"]["hidden_dim"] == 172);
    CHECK(m["config"]["n_layers"] == 5);
    CHECK(m["config"]["n_heads"] == 8);
    CHECK(m["config"]["n_kv_heads"] == 4);
    CHECK(m["config"]["vocab_size"] == 512);
    CHECK(m["config"]["seq_len"] == 512);
    CHECK(m["config"]["shared_classifier"] == true);
    CHECK(m["parameters"] == ck.config().parameter_count());
    CHECK(m["matmul_parameters"] == cost.matmul_parameters);
    CHECK(m["weight_bytes"] == ck.weight_bytes());
    CHECK(m["kv_cache_bytes"] == cost.kv_cache_bytes);
    CHECK(res["load_ms"].get<double>() > 0);
    CHECK(res["first_token_ms"].get<double>() > 0);
    // The child's own peak: at least the weights it read, far below a GiB.
    CHECK(res["peak_rss_bytes"].get<int64_t>() > ck.weight_bytes());
    CHECK(res["peak_rss_bytes"].get<int64_t>() < (int64_t{1} << 30));
    CHECK(res["peak_rss_mib"].get<double>() ==
          Approx(res["peak_rss_bytes"].get<double>() / 1048576.0));
    CHECK(res["logits_finite"] == true);
    const json& pp = res["prefill"];
    CHECK(pp["tokens"] == 8);
    check_summary(pp["tok_per_s"]);
    CHECK(pp["gflops"].get<double>() ==
          Approx(2.0 * cost.matmul_parameters * pp["tok_per_s"]["median"].get<double>() / 1e9));
    CHECK(pp["sgemm_fraction"].get<double>() > 0);
    CHECK(pp["roofline_tok_per_s"].get<double>() > 0);
    // The rooflines measured just before and after this configuration; the
    // better of the two gives its fractions.
    const json& roof = res["roofline"];
    CHECK(roof["threads"] == res["threads"]);
    REQUIRE(res["roofline_samples"].size() == 2);
    for (const char* k : {"bandwidth_gbps", "sgemm_gflops"}) {
      const json& samples = res["roofline_samples"];
      CHECK(roof[k].get<double>() ==
            std::max(samples[0][k].get<double>(), samples[1][k].get<double>()));
      CHECK(samples[0]["threads"] == res["threads"]);
      CHECK(samples[1]["threads"] == res["threads"]);
    }
    CHECK(roof["bandwidth_gbps"].get<double>() > 0);
    CHECK(roof["sgemm_gflops"].get<double>() > 0);
    CHECK(pp["sgemm_fraction"].get<double>() ==
          Approx(pp["gflops"].get<double>() / roof["sgemm_gflops"].get<double>()));
    CHECK(res["decode"]["roofline_tok_per_s"].get<double>() ==
          Approx(roof["bandwidth_gbps"].get<double>() * 1e9 /
                 res["decode"]["bytes_per_token"].get<double>()));
    check_decode(res["decode"], 6, 0);
    check_decode(res["decode_at_depth"], 6, 20);
    // Deeper positions read more of the KV cache.
    CHECK(
        res["decode_at_depth"]["bytes_per_token"].get<double>() ==
        Approx(res["decode"]["bytes_per_token"].get<double>() + 20.0 * cost.kv_bytes_per_position));
  }
  CHECK(seen.size() == 4);
}

TEST_CASE("llama-bench markdown, CSV and plot", "[bench]") {
  const std::string model = model_path("stories260K.bin");
  const std::vector<std::string> base{"-c", model, "-b", "reference", "-p", "4",
                                      "-n", "4",   "-r", "1",         "-j", "1"};
  const auto md = run_bench(with_quick(base));
  INFO(md.err);
  REQUIRE(md.exit_code == 0);
  CHECK_THAT(md.out, Contains("| model | backend | threads |") && Contains("pp4 / sgemm") &&
                         Contains("tg4 / bw") && Contains("bw GB/s | sgemm GFLOP/s |") &&
                         Contains("| stories260K | reference | 1 |") && Contains("read bandwidth"));

  auto csv_args = with_quick(base);
  csv_args.insert(csv_args.end(), {"--format", "csv"});
  const auto csv = run_bench(csv_args);
  REQUIRE(csv.exit_code == 0);
  std::istringstream lines(csv.out);
  std::string header, row, extra;
  REQUIRE(std::getline(lines, header));
  REQUIRE(std::getline(lines, row));
  CHECK_FALSE(std::getline(lines, extra));
  CHECK(std::count(header.begin(), header.end(), ',') == std::count(row.begin(), row.end(), ','));
  CHECK_THAT(header, Contains("decode_bandwidth_fraction") && Contains("prefill_sgemm_fraction"));
  CHECK_THAT(row, Contains("stories260K,") && Contains(",reference,1,ok,"));

  const std::string png = temp_path("bench.png");
  auto plot_args = with_quick(base);
  plot_args.insert(plot_args.end(), {"--plot", png});
  const auto p = run_bench(plot_args);
  INFO(p.err);
  REQUIRE(p.exit_code == 0);
  const auto bytes = read_file(png);
  REQUIRE(bytes.size() > 1000);
  CHECK(std::memcmp(bytes.data(), "\x89PNG", 4) == 0);
  CHECK_FALSE(std::filesystem::exists(png + ".gp"));

  // A saved JSON report renders again without measuring.
  auto json_args = with_quick(base);
  json_args.insert(json_args.end(), {"--format", "json"});
  const auto saved = run_bench(json_args);
  REQUIRE(saved.exit_code == 0);
  const std::string report = temp_path("report.json");
  std::ofstream(report) << saved.out;
  const json j = json::parse(saved.out);
  const auto again = run_bench({"--from-json", report, "--format", "csv"});
  INFO(again.err);
  REQUIRE(again.exit_code == 0);
  CHECK(again.out.substr(0, again.out.find('\n')) == header);
  std::ostringstream load_ms;
  load_ms << std::fixed << std::setprecision(2) << j["results"][0]["load_ms"].get<double>();
  CHECK_THAT(again.out, Contains(",ok,," + load_ms.str() + ","));
}

TEST_CASE("llama-bench --parallel decodes several sequences per configuration", "[bench]") {
  const std::string model = model_path("stories260K.bin");
  const std::vector<std::string> base{"-c", model, "-b", "blas,graph", "-p", "8",          "-n",
                                      "6",  "-r",  "2",  "-j",         "1",  "--parallel", "1,3"};
  auto args = with_quick(base);
  args.insert(args.end(), {"--format", "json"});
  const auto r = run_bench(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j["settings"]["parallel"] == std::vector<int64_t>{1, 3});
  const llama::Checkpoint ck = llama::Checkpoint::open(model);
  const auto cost = llama::bench::ModelCost::of(ck.model());
  REQUIRE(j["results"].size() == 2);
  for (const json& res : j["results"]) {
    INFO(res.dump());
    REQUIRE(res["parallel"].size() == 2);
    const double single = res["decode"]["tok_per_s"]["median"].get<double>();
    for (size_t i = 0; i < 2; ++i) {
      const json& e = res["parallel"][i];
      const int64_t n = i == 0 ? 1 : 3;
      CHECK(e["sequences"] == n);
      CHECK(e["status"] == "ok");
      CHECK(e["backend_name"] == res["backend"]);
      CHECK(e["context"] == 14);  // -p + -n: the caches the workload fills
      check_summary(e["decode_tok_per_s"]);
      check_summary(e["prefill_tok_per_s"]);
      const double aggregate = e["decode_tok_per_s"]["median"].get<double>();
      CHECK(e["per_sequence_tok_per_s"].get<double>() == Approx(aggregate / double(n)));
      CHECK(e["x_single"].get<double>() == Approx(aggregate / single));
      CHECK(e["logits_finite"] == true);
      // Its own child: at least the weights, far below a GiB, against its budget.
      CHECK(e["peak_rss_bytes"].get<int64_t>() > ck.weight_bytes());
      CHECK(e["peak_rss_bytes"].get<int64_t>() < (int64_t{1} << 30));
      CHECK(e["rss_budget_bytes"] ==
            ck.weight_bytes() + n * 14 * cost.kv_bytes_per_position + (int64_t{64} << 20));
      CHECK(e["rss_within_budget"] ==
            (e["peak_rss_bytes"].get<int64_t>() <= e["rss_budget_bytes"].get<int64_t>()));
      // Both claim batch invariance for f32 weights (the core's f32 GEMM).
      CHECK(e["batch_invariant"] == true);
    }
  }

  auto md_args = with_quick(base);
  const std::string png = temp_path("bench-parallel.png");
  md_args.insert(md_args.end(), {"--plot", png});
  const auto md = run_bench(md_args);
  INFO(md.err);
  REQUIRE(md.exit_code == 0);
  CHECK_THAT(md.out, Contains("Many sequences (--parallel)") &&
                         Contains("| stories260K | graph | 1 | 3 |") &&
                         Contains("| decode tok/s aggregate | per sequence | x single |"));
  CHECK_THAT(md.err, Contains("stories260K blas j1 x3: decode"));
  const auto bytes = read_file(png);
  REQUIRE(bytes.size() > 1000);
  CHECK(std::memcmp(bytes.data(), "\x89PNG", 4) == 0);

  const std::string b = "llama-bench";
  check_one_line_error(run_bench({"-c", model, "--parallel", "0"}), b, 2, "--parallel");
  check_one_line_error(run_bench({"-c", model, "--parallel", "2,x"}), b, 2, "--parallel");
  check_one_line_error(run_bench({"-c", model, "--parallel", "5000"}), b, 2, "--parallel");
}

TEST_CASE("llama-bench skips decode at a depth past the context with a note", "[bench]") {
  const std::string model = model_path("rand-gqa.bin");  // seq_len 256
  const auto r = run_bench(with_quick({"-c", model, "-b", "reference", "-p", "4", "-n", "8", "-d",
                                       "250", "-r", "1", "-j", "1", "--format", "json"}));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  REQUIRE(j["results"].size() == 1);
  CHECK(j["results"][0]["decode_at_depth"].is_null());
  CHECK(j["results"][0]["decode"].is_object());
  REQUIRE(j["notes"].size() == 1);
  CHECK_THAT(j["notes"][0].get<std::string>(), Contains("exceeds seq_len 256"));
}

TEST_CASE("llama-bench refuses bad flags and inputs with one line", "[bench]") {
  const std::string model = model_path("stories260K.bin");
  const std::string b = "llama-bench";
  check_one_line_error(run_bench({}), b, 2, "--checkpoint");
  check_one_line_error(run_bench({"-c", model, "-p", "0"}), b, 2, "--n-prompt");
  check_one_line_error(run_bench({"-c", model, "-n", "-3"}), b, 2, "--n-gen");
  check_one_line_error(run_bench({"-c", model, "-d", "-1"}), b, 2, "--depth");
  check_one_line_error(run_bench({"-c", model, "-r", "0"}), b, 2, "--repetitions");
  check_one_line_error(run_bench({"-c", model, "-j", "0"}), b, 2, "--threads");
  check_one_line_error(run_bench({"-c", model, "-j", "1,x"}), b, 2, "--threads");
  check_one_line_error(run_bench({"-c", model, "-j", "1,"}), b, 2, "--threads");
  check_one_line_error(run_bench({"-c", model, "-b", "blas,,graph"}), b, 2, "--backend");
  check_one_line_error(run_bench({"-c", model, "--format", "xml"}), b, 2, "--format");
  check_one_line_error(run_bench({"-c", model, "-p", "many"}), b, 2, "n-prompt");
  check_one_line_error(run_bench({"-c", model, "--plot", ""}), b, 2, "--plot");
  check_one_line_error(run_bench({"-c", model, "--frobnicate"}), b, 2, "frobnicate");
  check_one_line_error(run_bench({"-c", model, "--bandwidth-mib", "0"}), b, 2, "--bandwidth-mib");
  // Inputs, found before anything slow runs.
  check_one_line_error(run_bench(with_quick({"-c", temp_path("missing.bin")})), b, 1,
                       "cannot open");
  check_one_line_error(run_bench(with_quick({"-c", model, "-b", "nosuch"})), b, 1, "nosuch");
  check_one_line_error(run_bench(with_quick({"-c", model, "-p", "600"})), b, 1,
                       "--n-prompt 600 exceeds seq_len 512");
  check_one_line_error(run_bench({"--from-json", temp_path("missing.json")}), b, 1, "cannot open");
  check_one_line_error(run_bench({"--from-json", model}), b, 1, "not a llama-bench JSON report");
  check_one_line_error(run_bench({"--from-json", model, "-c", model}), b, 2, "--from-json");
}

TEST_CASE("summaries and percentiles", "[bench]") {
  using llama::bench::percentile;
  using llama::bench::summarize;
  const std::vector<double> odd{5, 1, 3}, even{4, 1, 3, 2};
  CHECK(summarize(odd).median == 3);
  CHECK(summarize(odd).min == 1);
  CHECK(summarize(odd).max == 5);
  CHECK(summarize(even).median == 2.5);
  CHECK(summarize(std::vector<double>{}).median == 0);
  std::vector<double> hundred;
  for (int i = 100; i >= 1; --i) hundred.push_back(i);
  CHECK(percentile(hundred, 50) == 50);
  CHECK(percentile(hundred, 99) == 99);
  CHECK(percentile(hundred, 100) == 100);
  CHECK(percentile(hundred, 0) == 1);
}

TEST_CASE("the cost model counts what a token reads and computes", "[bench]") {
  // rand-gqa: dim 48, hidden 128, 3 layers, 6 heads, 2 kv heads (kv_dim 16),
  // vocab 512, seq 256, separate classifier.
  const llama::Checkpoint ck = llama::Checkpoint::open(model_path("rand-gqa.bin"));
  const auto cost = llama::bench::ModelCost::of(ck.model());
  const int64_t per_layer = 2 * 48 * 48 + 2 * 16 * 48 + 3 * 48 * 128;
  CHECK(cost.matmul_parameters == 3 * per_layer + 512 * 48);
  // Every tensor but the embedding table, whose one row is read.
  CHECK(cost.weight_bytes_per_token == ck.weight_bytes() - 512 * 48 * 4 + 48 * 4);
  CHECK(cost.kv_bytes_per_position == 2 * 3 * 16 * 4);
  CHECK(cost.kv_cache_bytes == 2 * 3 * 256 * 16 * 4);
  // Decoding positions 10..13 attends over 11..14 positions: 12.5 on average.
  CHECK(cost.decode_bytes_per_token(10, 4) ==
        Approx(static_cast<double>(cost.weight_bytes_per_token) + 12.5 * 2 * 3 * 16 * 4));
  CHECK(cost.prefill_flops_per_token() == 2.0 * static_cast<double>(cost.matmul_parameters));
}

TEST_CASE("a failed configuration renders as a full-width error row", "[bench]") {
  const llama::Checkpoint ck = llama::Checkpoint::open(model_path("rand-gqa.bin"));
  const auto cost = llama::bench::ModelCost::of(ck.model());
  llama::bench::BenchOptions o;
  o.checkpoints = {"rand-gqa.bin"};
  o.threads = {1};
  for (int64_t depth : {0, 5}) {
    o.depth = depth;
    const json model = llama::bench::model_json("rand-gqa.bin", ck.model(), cost);
    const json report{
        {"settings", llama::bench::settings_json(o)},
        {"machine", {{"cpu", "test"}, {"cores", 1}, {"openblas_core", "test"}}},
        {"rooflines", json::array()},
        {"results",
         {llama::bench::failed_result_json(model, "blas", 1, "blas: out of luck, really")}},
        {"notes", json::array()}};
    const std::string md = llama::bench::format_markdown(report);
    std::istringstream lines(md);
    std::string line, header, error_row;
    while (std::getline(lines, line)) {
      if (line.rfind("| model |", 0) == 0) header = line;
      if (line.find("error: blas: out of luck") != std::string::npos) error_row = line;
    }
    REQUIRE_FALSE(error_row.empty());
    CHECK(std::count(header.begin(), header.end(), '|') ==
          std::count(error_row.begin(), error_row.end(), '|'));
    const std::string csv = llama::bench::format_csv(report);
    const std::string csv_header = csv.substr(0, csv.find('\n'));
    const std::string csv_row = csv.substr(csv.find('\n') + 1);
    // The message's comma is inside a quoted field.
    auto fields = [](const std::string& row) {
      int64_t n = 1;
      bool quoted = false;
      for (char c : row) {
        if (c == '"') quoted = !quoted;
        if (c == ',' && !quoted) ++n;
      }
      return n;
    };
    CHECK(fields(csv_header) == fields(csv_row));
    CHECK_THAT(csv_row, Contains(",error,\"blas: out of luck, really\","));
  }
}
