// The parent's loop: rooflines first, then checkpoint x backend x threads,
// each in a fresh child process (llama-bench --run-config ...), so load
// time and peak RSS are per configuration; then the report and plot. The
// rooflines are measured again just before each configuration (in this
// process, whose buffers are freed before the child starts) and after it:
// on a shared machine the load drifts over a long run, and a fraction is
// only meaningful against the machine as it was at the time.
#include "bench_run.hpp"
#include "error_report.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "backend_flags.hpp"
#include "bench_options.hpp"
#include "child_process.hpp"
#include "llama/error.hpp"
#include "llama/registry.hpp"
#include "llama/version.hpp"
#include "measure.hpp"
#include "model_cost.hpp"
#include "opened_checkpoint.hpp"
#include "plot.hpp"
#include "report.hpp"
#include "rooflines.hpp"

namespace llama::bench {
namespace {

using nlohmann::json;
constexpr const char* kProgram = "llama-bench";
constexpr int kRooflinePasses = 5;

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown CPU";
}

int run_child(const BenchOptions& o, std::ostream& out) {
  RunSpec spec{o.checkpoints[0],
               o.backends[0],
               o.threads[0],
               o.prompt_tokens,
               o.decode_tokens,
               o.depth,
               o.repetitions,
               o.warmup,
               o.numerics,
               o.kv_cache,
               o.parallel.empty() ? 0 : o.parallel[0]};
  try {
    cli::load_plugins(o.plugins);
    out << (spec.parallel > 0 ? run_parallel(spec) : run_configuration(spec)).dump() << "\n";
    return 0;
  } catch (const Error& e) {
    out << json{{"error", e.what()}}.dump() << "\n";
  } catch (const std::bad_alloc&) {
    out << json{{"error", "out of memory"}}.dump() << "\n";
  } catch (const std::exception& e) {
    out << json{{"error", std::string("internal error: ") + e.what()}}.dump() << "\n";
  }
  return 1;
}

struct ModelEntry {
  std::string path;
  json model;
  ModelCost cost;
  int64_t depth = 0;  // 0: skipped for this checkpoint
};

// Opens every checkpoint before anything slow runs, so a bad path or a
// workload longer than a model's context fails at once.
std::vector<ModelEntry> load_models(const BenchOptions& o, json& notes) {
  std::vector<ModelEntry> models;
  for (const std::string& path : o.checkpoints) {
    const cli::OpenedCheckpoint ck = cli::OpenedCheckpoint::open(path);
    const int64_t seq = ck.config().seq_len;
    for (auto [v, flag] :
         {std::pair{o.prompt_tokens, "--n-prompt"}, {o.decode_tokens, "--n-gen"}}) {
      if (v > seq) {
        throw Error(path + ": " + flag + " " + std::to_string(v) + " exceeds seq_len " +
                    std::to_string(seq));
      }
    }
    ModelEntry m{
        path, {}, ModelCost::of(ck.model(), parse_kv_cache(o.kv_cache, "--kv-cache")), o.depth};
    m.model = model_json(path, ck.model(), m.cost);
    if (o.depth > 0 && o.depth + o.decode_tokens > seq) {
      m.depth = 0;
      notes.push_back(path + ": decode at depth skipped: --depth + --n-gen " +
                      std::to_string(o.depth + o.decode_tokens) + " exceeds seq_len " +
                      std::to_string(seq));
    }
    models.push_back(std::move(m));
  }
  return models;
}

void check_backends(const BenchOptions& o) {
  for (const std::string& b : o.backends) {
    BackendOptions bo;
    bo.threads = 1;
    (void)BackendRegistry::instance().create(b, bo);  // throws naming the unknown one
  }
}

// Interference from other processes only ever lowers a roofline measurement,
// so the better of the measurements either side of a configuration is the
// estimate of what the machine allowed while it ran.
Roofline combine(const Roofline& a, const Roofline& b) {
  Roofline r = a;
  r.bandwidth_gbps = std::max(a.bandwidth_gbps, b.bandwidth_gbps);
  r.bandwidth_median_gbps = std::max(a.bandwidth_median_gbps, b.bandwidth_median_gbps);
  r.sgemm_gflops = std::max(a.sgemm_gflops, b.sgemm_gflops);
  r.sgemm_median_gflops = std::max(a.sgemm_median_gflops, b.sgemm_median_gflops);
  return r;
}

std::string fmt(double v) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(v >= 100 ? 0 : 2) << v;
  return s.str();
}

// Runs a child with `args` and returns its JSON result; sets `error` (and returns
// null) when it failed, was killed or printed no result.
json run_child_process(const std::vector<std::string>& args, std::string& error) {
  const ChildOutput child = run_self(args);
  json raw;
  try {
    raw = json::parse(child.out);
  } catch (const json::exception&) {
    raw = nullptr;
  }
  if (child.signal != 0) {
    error =
        "killed by signal " + std::to_string(child.signal) + " (" + strsignal(child.signal) + ")";
  } else if (raw.is_object() && raw.contains("error")) {
    error = raw["error"].get<std::string>();
  } else if (child.exit_code != 0 || !raw.is_object()) {
    error = "child exited with code " + std::to_string(child.exit_code) + " and no result";
  }
  return error.empty() ? raw : json(nullptr);
}

// The --parallel counts of one configuration, each in its own child (its own peak
// RSS), against that configuration's single-sequence decode.
json run_parallel_counts(const BenchOptions& o, const ModelEntry& m, const std::string& backend,
                         int threads, const json& result, std::ostream& err) {
  json entries = json::array();
  for (int64_t n : o.parallel) {
    const std::string label = m.model["name"].get<std::string>() + " " + backend + " j" +
                              std::to_string(threads) + " x" + std::to_string(n);
    std::string error;
    const json raw = run_child_process(child_arguments(o, m.path, backend, threads, 0, n), error);
    if (!error.empty()) {
      err << kProgram << ": " << label << ": " << error << "\n";
      entries.push_back({{"sequences", n}, {"status", "error"}, {"error", error}});
      continue;
    }
    json e = parallel_json(m.model, m.cost, o, raw, result);
    err << kProgram << ": " << label << ": decode " << fmt(e["decode_tok_per_s"]["median"])
        << " tok/s aggregate, " << fmt(e["per_sequence_tok_per_s"]) << " per sequence ("
        << fmt(e["x_single"]) << "x single)\n";
    entries.push_back(std::move(e));
  }
  return entries;
}

// Runs one configuration in a child; `measure_after` takes the roofline
// once the child has finished, and the result uses the better of `before`
// and that (see combine).
template <typename MeasureAfter>
json run_one(const BenchOptions& o, const ModelEntry& m, const std::string& backend, int threads,
             const Roofline& before, MeasureAfter measure_after, std::ostream& err) {
  const std::string label =
      m.model["name"].get<std::string>() + " " + backend + " j" + std::to_string(threads);
  std::string error;
  const json raw = run_child_process(child_arguments(o, m.path, backend, threads, m.depth), error);
  const Roofline after = measure_after();
  if (!error.empty()) {
    err << kProgram << ": " << label << ": " << error << "\n";
    return failed_result_json(m.model, backend, threads, error);
  }
  json r = result_json(m.model, m.cost, backend, threads, o, m.depth, raw, combine(before, after));
  r["roofline_samples"] = json::array({roofline_json(before), roofline_json(after)});
  err << kProgram << ": " << label << ": pp" << o.prompt_tokens << " "
      << fmt(r["prefill"]["tok_per_s"]["median"]) << " tok/s, tg" << o.decode_tokens << " "
      << fmt(r["decode"]["tok_per_s"]["median"]) << " tok/s ("
      << fmt(r["decode"]["bandwidth_fraction"]) << " of bandwidth)\n";
  return r;
}

void emit(const BenchOptions& o, const json& report, std::ostream& out) {
  switch (o.format) {
    case ReportFormat::md:
      out << format_markdown(report);
      break;
    case ReportFormat::json:
      out << report.dump(2) << "\n";
      break;
    case ReportFormat::csv:
      out << format_csv(report);
      break;
  }
  out.flush();
  if (!o.plot_path.empty()) write_plot(report, o.plot_path);
}

// --from-json: the same outputs from a saved report, without measuring.
int render_saved(const BenchOptions& o, std::ostream& out) {
  std::ifstream in(o.from_json);
  if (!in) throw Error(o.from_json + ": cannot open: " + std::strerror(errno));
  json report;
  try {
    report = json::parse(in);
    emit(o, report, out);
  } catch (const json::exception& e) {
    throw Error(o.from_json + ": not a llama-bench JSON report: " + e.what());
  }
  return 0;
}

int run_parent(const BenchOptions& o, std::ostream& out, std::ostream& err) {
  if (!o.plot_path.empty()) require_gnuplot();
  json notes = json::array();
  const std::vector<ModelEntry> models = load_models(o, notes);
  check_backends(o);

  auto roofline = [&](int threads, const std::string& when) {
    Roofline r;
    measure_bandwidth(r, threads, o.bandwidth_mib * 1024 * 1024, kRooflinePasses);
    measure_sgemm(r, threads, o.sgemm_n, kRooflinePasses);
    err << kProgram << ": roofline j" << threads << " " << when << ": read "
        << fmt(r.bandwidth_gbps) << " GB/s, sgemm " << fmt(r.sgemm_gflops) << " GFLOP/s\n";
    return r;
  };
  std::vector<Roofline> roofs;
  for (int t : o.threads) roofs.push_back(roofline(t, "at start"));

  json results = json::array();
  bool failed = false;
  Roofline last = roofs.back();  // the latest measurement, nothing ran since
  for (const ModelEntry& m : models) {
    for (const std::string& b : o.backends) {
      for (int t : o.threads) {
        const Roofline before = last.threads == t ? last : roofline(t, "before");
        results.push_back(run_one(
            o, m, b, t, before, [&] { return last = roofline(t, "after"); }, err));
        failed = failed || results.back()["status"] != "ok";
        if (o.parallel.empty() || results.back()["status"] != "ok") continue;
        json& r = results.back();
        r["parallel"] = run_parallel_counts(o, m, b, t, r, err);
        for (const json& e : r["parallel"]) failed = failed || e["status"] != "ok";
      }
    }
  }

  json rooflines = json::array();
  for (const Roofline& r : roofs) rooflines.push_back(roofline_json(r));
  const unsigned hw = std::thread::hardware_concurrency();
  const json report{
      {"program", kProgram},
      {"version", LLAMA_BACKENDS_VERSION},
      {"settings", settings_json(o)},
      {"machine", {{"cpu", cpu_model()}, {"cores", hw}, {"openblas_core", openblas_core_name()}}},
      {"rooflines", rooflines},
      {"results", results},
      {"notes", notes}};
  emit(o, report, out);
  if (failed) {
    err << kProgram << ": some configurations failed (see the error lines above)\n";
    return 1;
  }
  return 0;
}

}  // namespace

int run_bench(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  BenchOptions o;
  try {
    o = parse_bench_options(args);
  } catch (const BenchUsageError& e) {
    return cli::report_usage_error(kProgram, err, e.what());
  }
  if (o.action == BenchAction::help) {
    out << o.help_text;
    return 0;
  }
  if (o.action == BenchAction::child) return run_child(o, out);
  return cli::run_reporting_errors(kProgram, err, [&] {
    if (o.action == BenchAction::render) return render_saved(o, out);
    cli::load_plugins(o.plugins);
    if (o.action == BenchAction::version) {
      out << cli::version_line(kProgram) << "\n";
      return 0;
    }
    if (o.action == BenchAction::list_backends) {
      cli::list_backends(out);
      return 0;
    }
    return run_parent(o, out, err);
  });
}

}  // namespace llama::bench
