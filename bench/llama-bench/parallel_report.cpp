// llama-bench --parallel: N sequences decoded together through forward_runs, each
// after its own prompt. Aggregate tokens/s is every sequence's generated tokens over
// the decode time (llama.cpp's llama-batched-bench S_TG); per-sequence is that over
// N; "x single" divides the aggregate by the same configuration's single-sequence
// decode (forward). The RSS budget is the weights, N caches of the context run and
// 64 MiB.
#include <iomanip>
#include <sstream>
#include <vector>

#include "report.hpp"
#include "stats.hpp"

namespace llama::bench {
namespace {

using nlohmann::json;

constexpr double kMiB = 1024.0 * 1024.0;
constexpr int64_t kRssAllowance = int64_t{64} << 20;  // beyond weights and caches

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

std::string rate(double v) { return fixed(v, v >= 100 ? 0 : (v >= 10 ? 1 : 2)); }

json summary(const std::vector<double>& v) {
  const Summary s = summarize(v);
  return {{"median", s.median}, {"min", s.min}, {"max", s.max}};
}

}  // namespace

json parallel_json(const json& model, const ModelCost& cost, const BenchOptions& o, const json& raw,
                   const json& single) {
  const int64_t n = raw["sequences"].get<int64_t>();
  std::vector<double> decode, prefill;
  for (const json& rep : raw["decode_ms"]) {
    double ms = 0;
    for (const json& step : rep) ms += step.get<double>();
    decode.push_back(ms > 0 ? double(n * o.decode_tokens) * 1000.0 / ms : 0.0);
  }
  for (const json& ms : raw["prefill_ms"]) {
    const double v = ms.get<double>();
    prefill.push_back(v > 0 ? double(n * o.prompt_tokens) * 1000.0 / v : 0.0);
  }
  const json tg = summary(decode);
  const double aggregate = tg["median"].get<double>();
  const double one = single["decode"]["tok_per_s"]["median"].get<double>();
  const int64_t context = raw["context"].get<int64_t>();
  const int64_t budget = model["weight_bytes"].get<int64_t>() +
                         n * context * cost.kv_bytes_per_position + kRssAllowance;
  const int64_t rss = raw["peak_rss_bytes"].get<int64_t>();
  return {{"sequences", n},
          {"status", "ok"},
          {"error", nullptr},
          {"backend_name", raw["backend_name"]},
          {"context", context},
          {"load_ms", raw["load_ms"]},
          {"prefill_tok_per_s", summary(prefill)},
          {"decode_tok_per_s", tg},
          {"per_sequence_tok_per_s", aggregate / double(n)},
          {"x_single", one > 0 ? aggregate / one : 0.0},
          {"peak_rss_bytes", rss},
          {"peak_rss_mib", double(rss) / kMiB},
          {"rss_budget_bytes", budget},
          {"rss_within_budget", rss <= budget},
          {"logits_finite", raw["logits_finite"]},
          {"batch_invariant", raw["batch_invariant"]}};
}

std::string format_parallel_markdown(const json& report) {
  std::ostringstream s;
  bool any = false;
  for (const json& r : report["results"]) any = any || r.value("parallel", json()).is_array();
  if (!any) return "";
  const json& st = report["settings"];
  s << "\nMany sequences (--parallel): each sequence reads its own pp"
    << st["prompt_tokens"].get<int64_t>() << " prompt (all in one forward_runs call), then tg"
    << st["decode_tokens"].get<int64_t>()
    << " steps of one forward_runs call with a token per sequence. Aggregate = all sequences' "
       "tokens / decode time; x single = aggregate / the row's single-sequence decode above; "
       "RSS budget = weights + N KV caches of the context + 64 MiB.\n\n"
    << "| model | backend | threads | sequences | decode tok/s aggregate | per sequence | x "
       "single | prefill tok/s aggregate | peak RSS MiB | RSS budget MiB | batch-invariant |\n"
    << "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
  for (const json& r : report["results"]) {
    if (!r.value("parallel", json()).is_array()) continue;
    for (const json& e : r["parallel"]) {
      s << "| " << r["model"]["name"].get<std::string>() << " | " << r["backend"].get<std::string>()
        << " | " << r["threads"] << " | " << e["sequences"] << " | ";
      if (e["status"] != "ok") {
        s << "error: " << e["error"].get<std::string>() << " |||||||\n";
        continue;
      }
      const json& tg = e["decode_tok_per_s"];
      s << rate(tg["median"]) << " (" << rate(tg["min"]) << "-" << rate(tg["max"]) << ") | "
        << rate(e["per_sequence_tok_per_s"]) << " | " << fixed(e["x_single"], 2) << " | "
        << rate(e["prefill_tok_per_s"]["median"]) << " | " << fixed(e["peak_rss_mib"], 0) << " | "
        << fixed(e["rss_budget_bytes"].get<double>() / kMiB, 0) << " | "
        << (e["batch_invariant"].get<bool>() ? "yes" : "no") << " |\n";
    }
  }
  return s.str();
}

}  // namespace llama::bench
