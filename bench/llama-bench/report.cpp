// Assembles result objects (medians, percentiles, roofline fractions) and
// renders the report as a markdown table or CSV.
#include "report.hpp"

#include <filesystem>
#include <iomanip>
#include <sstream>
#include <vector>

#include "stats.hpp"

namespace llama::bench {
namespace {

using nlohmann::json;

json summary_json(const Summary& s) {
  return {{"median", s.median}, {"min", s.min}, {"max", s.max}};
}

// Tokens/s per repetition from `tokens` tokens in `ms` milliseconds each.
std::vector<double> rates(const std::vector<double>& ms, int64_t tokens) {
  std::vector<double> r;
  for (double m : ms) r.push_back(m > 0 ? static_cast<double>(tokens) * 1000.0 / m : 0.0);
  return r;
}

// Decode figures from per-repetition, per-token times.
json decode_json(const json& per_rep, int64_t tokens, int64_t depth, const ModelCost& cost,
                 const Roofline& roof) {
  std::vector<double> totals, all;
  for (const json& rep : per_rep) {
    double total = 0;
    for (const json& t : rep) {
      total += t.get<double>();
      all.push_back(t.get<double>());
    }
    totals.push_back(total);
  }
  const Summary tps = summarize(rates(totals, tokens));
  const double bytes = cost.decode_bytes_per_token(depth, tokens);
  const double roofline_tps = roof.bandwidth_gbps * 1e9 / bytes;
  return {{"tokens", tokens},
          {"depth", depth},
          {"tok_per_s", summary_json(tps)},
          {"ms_per_token", {{"p50", percentile(all, 50)}, {"p99", percentile(all, 99)}}},
          {"bytes_per_token", bytes},
          {"roofline_tok_per_s", roofline_tps},
          {"bandwidth_fraction", tps.median / roofline_tps}};
}

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

// "median (min-max)" with a precision suited to the magnitude.
std::string rate_cell(const json& s) {
  const double m = s["median"].get<double>();
  const int d = m >= 100 ? 0 : (m >= 10 ? 1 : 2);
  return fixed(m, d) + " (" + fixed(s["min"].get<double>(), d) + "-" +
         fixed(s["max"].get<double>(), d) + ")";
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string number_or_empty(const json& v, int digits) {
  return v.is_number() ? fixed(v.get<double>(), digits) : "";
}

}  // namespace

json roofline_json(const Roofline& r) {
  return {{"threads", r.threads},
          {"bandwidth_gbps", r.bandwidth_gbps},
          {"bandwidth_median_gbps", r.bandwidth_median_gbps},
          {"bandwidth_buffer_bytes", r.bandwidth_bytes},
          {"sgemm_gflops", r.sgemm_gflops},
          {"sgemm_median_gflops", r.sgemm_median_gflops},
          {"sgemm_n", r.sgemm_n}};
}

json settings_json(const BenchOptions& o) {
  return {{"checkpoints", o.checkpoints},
          {"backends", o.backends},
          {"threads", o.threads},
          {"prompt_tokens", o.prompt_tokens},
          {"decode_tokens", o.decode_tokens},
          {"depth", o.depth},
          {"parallel", o.parallel},
          {"repetitions", o.repetitions},
          {"warmup", o.warmup},
          {"numerics", o.numerics},
          {"kv_cache", o.kv_cache}};
}

json model_json(const std::string& path, const Model& model, const ModelCost& cost) {
  const Config& c = model.config;
  return {{"checkpoint", path},
          {"name", std::filesystem::path(path).stem().string()},
          {"config",
           {{"dim", c.dim},
            {"hidden_dim", c.hidden_dim},
            {"n_layers", c.n_layers},
            {"n_heads", c.n_heads},
            {"n_kv_heads", c.n_kv_heads},
            {"vocab_size", c.vocab_size},
            {"seq_len", c.seq_len},
            {"shared_classifier", c.shared_classifier}}},
          {"parameters", c.parameter_count()},
          {"matmul_parameters", cost.matmul_parameters},
          {"weight_bytes", model.weights.bytes()},
          {"kv_cache_bytes", cost.kv_cache_bytes}};
}

json result_json(const json& model, const ModelCost& cost, const std::string& backend, int threads,
                 const BenchOptions& o, int64_t depth, const json& raw, const Roofline& roof) {
  const Summary pp =
      summarize(rates(raw["prefill_ms"].get<std::vector<double>>(), o.prompt_tokens));
  const double gflops = cost.prefill_flops_per_token() * pp.median / 1e9;
  json r{{"model", model},
         {"backend", backend},
         {"backend_name", raw["backend_name"]},
         {"threads", threads},
         {"status", "ok"},
         {"error", nullptr},
         {"load_ms", raw["load_ms"]},
         {"first_token_ms", raw["first_token_ms"]},
         {"peak_rss_bytes", raw["peak_rss_bytes"]},
         {"peak_rss_mib", raw["peak_rss_bytes"].get<double>() / (1024.0 * 1024.0)},
         {"logits_finite", raw["logits_finite"]},
         {"prefill",
          {{"tokens", o.prompt_tokens},
           {"tok_per_s", summary_json(pp)},
           {"gflops", gflops},
           {"roofline_tok_per_s", roof.sgemm_gflops * 1e9 / cost.prefill_flops_per_token()},
           {"sgemm_fraction", gflops / roof.sgemm_gflops}}},
         {"decode", decode_json(raw["decode_ms"], o.decode_tokens, 0, cost, roof)},
         {"roofline", roofline_json(roof)},
         {"decode_at_depth", nullptr},
         {"parallel", nullptr}};
  if (depth > 0)
    r["decode_at_depth"] = decode_json(raw["depth_ms"], o.decode_tokens, depth, cost, roof);
  return r;
}

json failed_result_json(const json& model, const std::string& backend, int threads,
                        const std::string& error) {
  return {{"model", model},
          {"backend", backend},
          {"backend_name", nullptr},
          {"threads", threads},
          {"status", "error"},
          {"error", error},
          {"load_ms", nullptr},
          {"first_token_ms", nullptr},
          {"peak_rss_bytes", nullptr},
          {"peak_rss_mib", nullptr},
          {"logits_finite", nullptr},
          {"prefill", nullptr},
          {"decode", nullptr},
          {"decode_at_depth", nullptr},
          {"roofline", nullptr},
          {"roofline_samples", nullptr},
          {"parallel", nullptr}};
}

std::string format_markdown(const json& report) {
  std::ostringstream s;
  const json& st = report["settings"];
  const std::string pp = "pp" + std::to_string(st["prompt_tokens"].get<int64_t>());
  const std::string tg = "tg" + std::to_string(st["decode_tokens"].get<int64_t>());
  const std::string at = "@d" + std::to_string(st["depth"].get<int64_t>());
  s << "Rooflines at the start of the run (OpenBLAS "
    << report["machine"]["openblas_core"].get<std::string>() << ", "
    << report["machine"]["cpu"].get<std::string>() << "):\n\n";
  for (const json& r : report["rooflines"]) {
    s << "- " << r["threads"] << " thread(s): read bandwidth "
      << fixed(r["bandwidth_gbps"].get<double>(), 1) << " GB/s (median "
      << fixed(r["bandwidth_median_gbps"].get<double>(), 1) << ", "
      << r["bandwidth_buffer_bytes"].get<int64_t>() / (1024 * 1024) << " MiB buffer), sgemm "
      << fixed(r["sgemm_gflops"].get<double>(), 0) << " GFLOP/s (median "
      << fixed(r["sgemm_median_gflops"].get<double>(), 0) << ", n=" << r["sgemm_n"] << ")\n";
  }
  // The depth columns only when a depth was asked for.
  const bool with_depth = st["depth"].get<int64_t>() > 0;
  s << "\nEach row's fractions use the better of the rooflines measured just before and just after "
       "it (last two columns).\n"
    << "\n| model | backend | threads | load ms | peak RSS MiB | " << pp << " tok/s | " << pp
    << " / sgemm | " << tg << " tok/s | " << tg << " / bw | ms/tok p50 | ms/tok p99 | ";
  if (with_depth) s << tg << at << " tok/s | " << tg << at << " / bw | ";
  s << "bw GB/s | sgemm GFLOP/s |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    << (with_depth ? "---:|---:|" : "") << "---:|---:|\n";
  for (const json& r : report["results"]) {
    s << "| " << r["model"]["name"].get<std::string>() << " | " << r["backend"].get<std::string>()
      << " | " << r["threads"] << " | ";
    if (r["status"] != "ok") {
      s << "error: " << r["error"].get<std::string>() << " ||||||||||" << (with_depth ? "||" : "")
        << "\n";
      continue;
    }
    const json& d = r["decode"];
    s << fixed(r["load_ms"].get<double>(), 1) << " | " << fixed(r["peak_rss_mib"].get<double>(), 0)
      << " | " << rate_cell(r["prefill"]["tok_per_s"]) << " | "
      << fixed(r["prefill"]["sgemm_fraction"].get<double>(), 2) << " | "
      << rate_cell(d["tok_per_s"]) << " | " << fixed(d["bandwidth_fraction"].get<double>(), 2)
      << " | " << fixed(d["ms_per_token"]["p50"].get<double>(), 2) << " | "
      << fixed(d["ms_per_token"]["p99"].get<double>(), 2) << " | ";
    if (with_depth && r["decode_at_depth"].is_null()) {
      s << "- | - | ";
    } else if (with_depth) {
      const json& dd = r["decode_at_depth"];
      s << rate_cell(dd["tok_per_s"]) << " | " << fixed(dd["bandwidth_fraction"].get<double>(), 2)
        << " | ";
    }
    s << fixed(r["roofline"]["bandwidth_gbps"].get<double>(), 1) << " | "
      << fixed(r["roofline"]["sgemm_gflops"].get<double>(), 0) << " |\n";
  }
  s << format_parallel_markdown(report);
  if (!report["notes"].empty()) {
    s << "\n";
    for (const json& n : report["notes"]) s << "Note: " << n.get<std::string>() << "\n";
  }
  return s.str();
}

std::string format_csv(const json& report) {
  std::ostringstream s;
  s << "model,checkpoint,backend,threads,status,error,load_ms,first_token_ms,peak_rss_mib,"
       "prefill_tokens,prefill_tok_s_median,prefill_tok_s_min,prefill_tok_s_max,prefill_gflops,"
       "prefill_sgemm_fraction,decode_tokens,decode_tok_s_median,decode_tok_s_min,"
       "decode_tok_s_max,decode_ms_p50,decode_ms_p99,decode_bandwidth_fraction,depth,"
       "depth_tok_s_median,depth_tok_s_min,depth_tok_s_max,depth_ms_p50,depth_ms_p99,"
       "depth_bandwidth_fraction,bandwidth_gbps,sgemm_gflops\n";
  for (const json& r : report["results"]) {
    const json& roof = r["roofline"];
    const bool ok = r["status"] == "ok";
    auto get = [&](const json& obj, const std::vector<std::string>& path) -> json {
      const json* p = &obj;
      for (const std::string& k : path) {
        if (!p->is_object() || !p->contains(k)) return nullptr;
        p = &(*p)[k];
      }
      return *p;
    };
    s << csv_field(r["model"]["name"].get<std::string>()) << ","
      << csv_field(r["model"]["checkpoint"].get<std::string>()) << ","
      << csv_field(r["backend"].get<std::string>()) << "," << r["threads"] << ","
      << r["status"].get<std::string>() << "," << csv_field(ok ? "" : r["error"].get<std::string>())
      << "," << number_or_empty(r["load_ms"], 2) << "," << number_or_empty(r["first_token_ms"], 2)
      << "," << number_or_empty(r["peak_rss_mib"], 1) << ","
      << number_or_empty(get(r, {"prefill", "tokens"}), 0) << ",";
    for (const char* k : {"median", "min", "max"})
      s << number_or_empty(get(r, {"prefill", "tok_per_s", k}), 2) << ",";
    s << number_or_empty(get(r, {"prefill", "gflops"}), 2) << ","
      << number_or_empty(get(r, {"prefill", "sgemm_fraction"}), 4) << ",";
    for (const char* d : {"decode", "decode_at_depth"}) {
      s << number_or_empty(get(r, {d, std::string(d) == "decode" ? "tokens" : "depth"}), 0) << ",";
      for (const char* k : {"median", "min", "max"})
        s << number_or_empty(get(r, {d, "tok_per_s", k}), 2) << ",";
      s << number_or_empty(get(r, {d, "ms_per_token", "p50"}), 3) << ","
        << number_or_empty(get(r, {d, "ms_per_token", "p99"}), 3) << ","
        << number_or_empty(get(r, {d, "bandwidth_fraction"}), 4) << ",";
    }
    s << number_or_empty(get(roof, {"bandwidth_gbps"}), 2) << ","
      << number_or_empty(get(roof, {"sgemm_gflops"}), 2) << "\n";
  }
  return s.str();
}

}  // namespace llama::bench
