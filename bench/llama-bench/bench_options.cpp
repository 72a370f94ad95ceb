// Parses llama-bench's flags with Boost.Program_options; lists are
// comma-separated (-b blas,graph -j 1,2) or repeated (-c A -c B).
#include "bench_options.hpp"

#include "backend_flags.hpp"
#include "kv_cache_flag.hpp"
#include "numerics_flag.hpp"
#include "usage_message.hpp"

#include <boost/program_options.hpp>
#include <sstream>
#include <thread>

namespace po = boost::program_options;

namespace llama::bench {
namespace {

std::vector<std::string> split_list(const std::vector<std::string>& values, const char* flag) {
  std::vector<std::string> items;
  for (const std::string& v : values) {
    std::string item;
    std::istringstream in(v);
    while (std::getline(in, item, ',')) {
      if (item.empty()) throw BenchUsageError(std::string(flag) + ": empty item in '" + v + "'");
      items.push_back(item);
    }
    if (v.empty() || v.back() == ',') {
      throw BenchUsageError(std::string(flag) + ": empty item in '" + v + "'");
    }
  }
  return items;
}

// One item of a list of counts (--threads, --parallel): an integer in [1, most].
int64_t parse_count(const std::string& text, int64_t most, const char* flag) {
  size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || value < 1 || value > most) {
    throw BenchUsageError(std::string(flag) + ": each count must be an integer in [1, " +
                          std::to_string(most) + "], got '" + text + "'");
  }
  return value;
}

void check_range(int64_t v, int64_t lo, int64_t hi, const char* flag) {
  if (v < lo || v > hi) {
    throw BenchUsageError(std::string(flag) + ": must be in [" + std::to_string(lo) + ", " +
                          std::to_string(hi) + "], got " + std::to_string(v));
  }
}

}  // namespace

BenchOptions parse_bench_options(const std::vector<std::string>& args) {
  BenchOptions o;
  std::vector<std::string> backends, threads, parallel;
  std::string format = "md";

  po::options_description desc(
      "Usage: llama-bench -c CHECKPOINT [-c CHECKPOINT2 ...] [options]\nOptions");
  desc.add_options()("checkpoint,c", po::value(&o.checkpoints)->value_name("FILE"),
                     "llama2.c checkpoint or Hugging Face directory, repeatable (required)")(
      "backend,b", po::value(&backends)->value_name("LIST"),
      "comma-separated backends (default blas)")(
      "n-prompt,p", po::value(&o.prompt_tokens)->value_name("NUM"),
      "prompt tokens for prefill through forward_batch (default 128)")(
      "n-gen,n", po::value(&o.decode_tokens)->value_name("NUM"), "tokens to decode (default 64)")(
      "depth,d", po::value(&o.depth)->value_name("NUM"),
      "also decode after NUM positions in the KV cache (default 0: skip)")(
      "repetitions,r", po::value(&o.repetitions)->value_name("NUM"),
      "measured repetitions after the warm-up (default 5)")(
      "parallel", po::value(&parallel)->value_name("LIST"),
      "also decode N sequences at once (comma-separated counts, 1 to 4096), each after its own "
      "-p-token prompt, through forward_runs: aggregate and per-sequence decode tokens/s")(
      "threads,j", po::value(&threads)->value_name("LIST"),
      "comma-separated thread counts (default: every core)")(
      "warmup", po::value(&o.warmup)->value_name("NUM"), "untimed repetitions first (default 1)")(
      "format", po::value(&format)->value_name("md|json|csv"), "output format (default md)")(
      "plot", po::value(&o.plot_path)->value_name("FILE.png"),
      "also draw tokens/s against the rooflines with gnuplot")(
      "from-json", po::value(&o.from_json)->value_name("FILE"),
      "render a saved --format json report (with --format, --plot) instead of running")(
      "bandwidth-mib", po::value(&o.bandwidth_mib)->value_name("NUM"),
      "buffer for the read-bandwidth roofline, MiB (default 1024)")(
      "sgemm-n", po::value(&o.sgemm_n)->value_name("NUM"),
      "matrix size for the sgemm roofline (default 2048)")("version", "print the version and exit")(
      "help,h", "show this help");
  cli::add_backend_flags(desc, o.plugins);
  cli::add_numerics_flag(desc, o.numerics);
  cli::add_kv_cache_flag(desc, o.kv_cache);
  po::options_description hidden;
  hidden.add_options()("run-config", "child mode: run one configuration, print JSON");
  po::options_description all;
  all.add(desc).add(hidden);

  std::ostringstream help;
  help << desc;
  o.help_text = help.str();

  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(all).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw BenchUsageError(cli::usage_message(e, args));
  }
  if (vm.count("help")) {
    o.action = BenchAction::help;
    return o;
  }
  if (vm.count("version") || vm.count("list-backends")) {
    o.action = vm.count("version") ? BenchAction::version : BenchAction::list_backends;
    return o;
  }
  if (vm.count("run-config")) o.action = BenchAction::child;
  if (vm.count("from-json")) {
    if (o.from_json.empty()) throw BenchUsageError("--from-json: empty path");
    if (vm.count("checkpoint")) throw BenchUsageError("--from-json: cannot be combined with -c");
    o.action = BenchAction::render;
  }

  if (o.checkpoints.empty() && o.action != BenchAction::render)
    throw BenchUsageError("--checkpoint: required (-c FILE)");
  for (const std::string& c : o.checkpoints) {
    if (c.empty()) throw BenchUsageError("--checkpoint: empty path");
  }
  if (!backends.empty()) o.backends = split_list(backends, "--backend");
  for (const std::string& t : split_list(threads, "--threads"))
    o.threads.push_back(static_cast<int>(parse_count(t, 1024, "--threads")));
  if (o.threads.empty()) {
    const unsigned hw = std::thread::hardware_concurrency();
    o.threads.push_back(hw == 0 ? 1 : static_cast<int>(hw));
  }
  for (const std::string& n : split_list(parallel, "--parallel"))
    o.parallel.push_back(parse_count(n, 4096, "--parallel"));
  constexpr int64_t kMaxTokens = int64_t{1} << 24;
  check_range(o.prompt_tokens, 1, kMaxTokens, "--n-prompt");
  check_range(o.decode_tokens, 1, kMaxTokens, "--n-gen");
  check_range(o.depth, 0, kMaxTokens, "--depth");
  check_range(o.repetitions, 1, 1000, "--repetitions");
  check_range(o.warmup, 0, 1000, "--warmup");
  check_range(o.bandwidth_mib, 1, int64_t{1} << 20, "--bandwidth-mib");
  check_range(o.sgemm_n, 16, 65536, "--sgemm-n");
  if (format == "md")
    o.format = ReportFormat::md;
  else if (format == "json")
    o.format = ReportFormat::json;
  else if (format == "csv")
    o.format = ReportFormat::csv;
  else
    throw BenchUsageError("--format: must be md, json or csv, got '" + format + "'");
  if (vm.count("plot") && o.plot_path.empty()) throw BenchUsageError("--plot: empty path");
  try {
    cli::parse_numerics_flag(o.numerics);
    cli::parse_kv_cache_flag(o.kv_cache);
  } catch (const cli::UsageError& e) {
    throw BenchUsageError(e.what());  // exit 2 as every bad flag of llama-bench
  }

  if (o.action == BenchAction::child &&
      (o.checkpoints.size() != 1 || o.backends.size() != 1 || o.threads.size() != 1)) {
    throw BenchUsageError("--run-config: needs exactly one checkpoint, backend and thread count");
  }
  if (o.action == BenchAction::child && o.parallel.size() > 1)
    throw BenchUsageError("--run-config: takes at most one --parallel count");
  return o;
}

std::vector<std::string> child_arguments(const BenchOptions& o, const std::string& checkpoint,
                                         const std::string& backend, int threads, int64_t depth,
                                         int64_t parallel) {
  std::vector<std::string> args = {"--run-config",
                                   "-c",
                                   checkpoint,
                                   "-b",
                                   backend,
                                   "-j",
                                   std::to_string(threads),
                                   "-p",
                                   std::to_string(o.prompt_tokens),
                                   "-n",
                                   std::to_string(o.decode_tokens),
                                   "-d",
                                   std::to_string(depth),
                                   "-r",
                                   std::to_string(o.repetitions),
                                   "--warmup",
                                   std::to_string(o.warmup),
                                   "--numerics",
                                   o.numerics,
                                   "--kv-cache",
                                   o.kv_cache};
  if (parallel > 0) {
    args.push_back("--parallel");
    args.push_back(std::to_string(parallel));
  }
  for (const std::string& plugin : o.plugins) {
    args.push_back("--plugin");
    args.push_back(plugin);
  }
  return args;
}

}  // namespace llama::bench
