// Summaries and their text and JSON forms (load_report.hpp).
#include "load_report.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "llama/version.hpp"
#include "stream_request.hpp"

namespace llama::load {
namespace {

using json = nlohmann::ordered_json;

constexpr size_t kDistinctErrors = 5;  // messages shown per level

std::vector<double> scaled(const std::vector<double>& v, double factor) {
  std::vector<double> out;
  out.reserve(v.size());
  for (const double x : v) out.push_back(x * factor);
  return out;
}

json optional_json(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json percentiles_json(const Percentiles& p) {
  return {
      {"p50", optional_json(p.p50)}, {"p90", optional_json(p.p90)}, {"p99", optional_json(p.p99)}};
}

std::string fixed(const std::optional<double>& v, int decimals) {
  if (!v) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, *v);
  return buf;
}

const char* endpoint_name(Endpoint e) { return e == Endpoint::chat ? "chat" : "completions"; }

}  // namespace

LevelSummary summarize(const LevelRun& run) {
  LevelSummary s;
  s.concurrency = run.concurrency;
  s.wall_s = run.wall_s;
  std::vector<double> ttft, itl, latency, decode;
  for (const RequestRecord& r : run.records) {
    if (!r.ok) {
      ++s.failed;
      const std::string message = r.status != 0 && r.status != 200
                                      ? "HTTP " + std::to_string(r.status) + ": " + r.error
                                      : r.error;
      auto it = std::find_if(s.errors.begin(), s.errors.end(),
                             [&](const auto& e) { return e.first == message; });
      if (it != s.errors.end()) {
        ++it->second;
      } else if (s.errors.size() < kDistinctErrors) {
        s.errors.emplace_back(message, 1);
      }
      continue;
    }
    ++s.ok;
    s.generated_tokens += r.tokens;
    s.content_chunks += r.chunks;
    if (!r.tokens_from_usage) ++s.requests_without_usage;
    if (r.ttft_s) ttft.push_back(*r.ttft_s);
    itl.insert(itl.end(), r.gaps_s.begin(), r.gaps_s.end());
    latency.push_back(r.total_s);
    if (const auto d = r.decode_tokens_per_s()) decode.push_back(*d);
  }
  if (s.wall_s > 0) s.aggregate_tokens_per_s = static_cast<double>(s.generated_tokens) / s.wall_s;
  s.decode_tokens_per_s_mean = mean(decode);
  s.ttft_ms = percentiles(scaled(ttft, 1e3));
  s.itl_ms = percentiles(scaled(itl, 1e3));
  s.latency_s = percentiles(latency);
  return s;
}

json report_json(const LoadOptions& o, const std::vector<LevelSummary>& levels) {
  json settings = {{"url", o.url},
                   {"endpoint", endpoint_name(o.endpoint)},
                   {"concurrency", o.concurrency},
                   {"max_tokens", o.max_tokens},
                   {"temperature", o.temperature},
                   {"warmup_requests", o.warmup},
                   {"timeout_s", o.timeout},
                   {"prompt_chars", o.prompt.size()},
                   {"distinct_prompts", o.distinct_prompts}};
  settings["requests_per_level"] = o.requests > 0 ? json(o.requests) : json(nullptr);
  settings["duration_s"] = o.requests > 0 ? json(nullptr) : json(o.duration);
  settings["prompt_tokens_requested"] = o.prompt_tokens > 0 ? json(o.prompt_tokens) : json(nullptr);
  settings["seed"] = o.seed ? json(*o.seed) : json(nullptr);
  settings["model"] = o.model.empty() ? json(nullptr) : json(o.model);
  json out = {{"program", "llama-load"},
              {"version", LLAMA_BACKENDS_VERSION},
              {"percentiles", "nearest-rank"},
              {"settings", settings},
              {"levels", json::array()}};
  for (const LevelSummary& s : levels) {
    json errors = json::array();
    for (const auto& [message, count] : s.errors)
      errors.push_back({{"message", message}, {"count", count}});
    out["levels"].push_back(
        {{"concurrency", s.concurrency},
         {"requests_ok", s.ok},
         {"requests_failed", s.failed},
         {"wall_s", s.wall_s},
         {"generated_tokens", s.generated_tokens},
         {"content_chunks", s.content_chunks},
         {"requests_without_usage", s.requests_without_usage},
         {"aggregate_tokens_per_s", s.aggregate_tokens_per_s},
         {"decode_tokens_per_s_mean", optional_json(s.decode_tokens_per_s_mean)},
         {"ttft_ms", percentiles_json(s.ttft_ms)},
         {"itl_ms", percentiles_json(s.itl_ms)},
         {"request_latency_s", percentiles_json(s.latency_s)},
         {"errors", errors}});
  }
  return out;
}

std::string report_text(const LoadOptions& o, const std::vector<LevelSummary>& levels) {
  std::ostringstream out;
  out << "llama-load: " << o.url << endpoint_path(o) << ", max_tokens " << o.max_tokens
      << ", prompt ";
  if (o.prompt_tokens > 0) {
    out << "about " << o.prompt_tokens << " tokens" << (o.distinct_prompts ? " (distinct)" : "");
  } else {
    out << o.prompt.size() << " chars";
  }
  out << ", "
      << (o.requests > 0 ? std::to_string(o.requests) + " requests" : fixed(o.duration, 1) + " s")
      << " per level, percentiles nearest-rank\n";
  char line[512];
  std::snprintf(line, sizeof line, "%5s %6s %6s %10s %10s %26s %26s %8s\n", "conc", "ok", "failed",
                "tok/s", "req tok/s", "TTFT ms p50/p90/p99", "ITL ms p50/p90/p99", "wall s");
  out << line;
  for (const LevelSummary& s : levels) {
    const std::string ttft =
        fixed(s.ttft_ms.p50, 1) + " / " + fixed(s.ttft_ms.p90, 1) + " / " + fixed(s.ttft_ms.p99, 1);
    const std::string itl =
        fixed(s.itl_ms.p50, 2) + " / " + fixed(s.itl_ms.p90, 2) + " / " + fixed(s.itl_ms.p99, 2);
    std::snprintf(line, sizeof line, "%5d %6lld %6lld %10s %10s %26s %26s %8s\n", s.concurrency,
                  static_cast<long long>(s.ok), static_cast<long long>(s.failed),
                  fixed(s.aggregate_tokens_per_s, 1).c_str(),
                  fixed(s.decode_tokens_per_s_mean, 1).c_str(), ttft.c_str(), itl.c_str(),
                  fixed(s.wall_s, 2).c_str());
    out << line;
  }
  for (const LevelSummary& s : levels) {
    if (s.requests_without_usage > 0)
      out << "concurrency " << s.concurrency << ": " << s.requests_without_usage
          << " requests had no usage chunk; their tokens are counted as content chunks\n";
    if (s.content_chunks != s.generated_tokens && s.requests_without_usage == 0)
      out << "concurrency " << s.concurrency << ": " << s.content_chunks << " content chunks for "
          << s.generated_tokens << " tokens; ITL is measured between chunks\n";
    for (const auto& [message, count] : s.errors)
      out << "concurrency " << s.concurrency << ": " << count << " x " << message << "\n";
  }
  return out.str();
}

}  // namespace llama::load
