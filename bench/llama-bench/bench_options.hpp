// llama-bench's command line: checkpoints x backends x thread counts, the
// workload sizes, repetitions, output format and plot.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "usage_error.hpp"

namespace llama::bench {

enum class ReportFormat { md, json, csv };
enum class BenchAction { run, help, version, list_backends, child, render };

struct BenchOptions {
  BenchAction action = BenchAction::run;
  std::vector<std::string> checkpoints;
  std::vector<std::string> backends{"blas"};
  std::vector<std::string> plugins;  // --plugin FILE, in order; children get them too
  std::vector<int> threads;          // default: every core
  int64_t prompt_tokens = 128;       // -p: prefill through forward_batch
  int64_t decode_tokens = 64;        // -n: decode from position 0
  int64_t depth = 0;                 // -d: decode again after this many positions (0: skip)
  // --parallel: also decode this many sequences at once after a prompt each (one child
  // per count); a child runs the one count it is given.
  std::vector<int64_t> parallel;
  int64_t repetitions = 5;  // -r: measured repetitions after the warm-up
  int64_t warmup = 1;       // untimed repetitions first
  ReportFormat format = ReportFormat::md;
  std::string plot_path;             // empty: no plot
  std::string from_json;             // render: a saved --format json report
  int64_t bandwidth_mib = 1024;      // read-bandwidth buffer; >= several times the LLC
  int64_t sgemm_n = 2048;            // sgemm roofline: n x n x n product
  std::string numerics = "exact";    // --numerics, for every configuration (children get it)
  std::string kv_cache = "default";  // --kv-cache, for every configuration (children get it)
  std::string help_text;
};

// A bad flag or value; the message names the flag. Exit code 2. A
// cli::UsageError, as the shared flag helpers (cli::parse_seed) throw.
class BenchUsageError : public cli::UsageError {
 public:
  using cli::UsageError::UsageError;
};

// `--run-config` (hidden) selects the child mode: exactly one checkpoint,
// backend and thread count, result as one JSON line on stdout.
BenchOptions parse_bench_options(const std::vector<std::string>& args);

// The arguments that make a child run one configuration of `o`.
// `parallel` > 0: the child decodes that many sequences instead (--parallel N).
std::vector<std::string> child_arguments(const BenchOptions& o, const std::string& checkpoint,
                                         const std::string& backend, int threads, int64_t depth,
                                         int64_t parallel = 0);

}  // namespace llama::bench
