// What llama-load reports per level (docs/performance.md, "Serving load"): counts,
// aggregate and per-request token rates, TTFT and ITL percentiles; as a text table or
// one JSON object.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "load_options.hpp"
#include "load_run.hpp"
#include "stats.hpp"

namespace llama::load {

struct LevelSummary {
  int concurrency = 0;
  int64_t ok = 0, failed = 0;
  double wall_s = 0;
  int64_t generated_tokens = 0;  // of the ok requests
  int64_t content_chunks = 0;
  int64_t requests_without_usage = 0;  // tokens counted as chunks for these
  double aggregate_tokens_per_s = 0;   // generated_tokens / wall_s
  std::optional<double> decode_tokens_per_s_mean;
  Percentiles ttft_ms, itl_ms, latency_s;
  std::vector<std::pair<std::string, int64_t>> errors;  // first distinct messages, counts
};

LevelSummary summarize(const LevelRun& run);

// The whole report: settings, then each level.
nlohmann::ordered_json report_json(const LoadOptions& o, const std::vector<LevelSummary>& levels);
std::string report_text(const LoadOptions& o, const std::vector<LevelSummary>& levels);

}  // namespace llama::load
