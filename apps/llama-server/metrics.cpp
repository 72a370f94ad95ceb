// Prometheus text for /metrics (metrics.hpp).
#include "metrics.hpp"

#include <algorithm>
#include <sstream>

namespace llama::server {
namespace {

void metric(std::ostringstream& out, const char* name, const char* type, const char* help,
            double value) {
  out << "# HELP llama_backends_" << name << " " << help << "\n"
      << "# TYPE llama_backends_" << name << " " << type << "\n"
      << "llama_backends_" << name << " " << value << "\n";
}

}  // namespace

std::string prometheus_text(const EngineStats& s, const std::vector<SequenceState>& sequences,
                            int64_t context) {
  int64_t cached = 0;
  for (const SequenceState& q : sequences) cached += q.cached;
  const double capacity = static_cast<double>(context) * static_cast<double>(sequences.size());
  std::ostringstream out;
  out.precision(17);
  const auto d = [](int64_t v) { return static_cast<double>(v); };
  metric(out, "prompt_tokens_total", "counter", "Prompt tokens of finished requests.",
         d(s.prompt_tokens));
  metric(out, "prompt_tokens_cached_total", "counter",
         "Prompt tokens found in a sequence's cache and not run again.", d(s.cached_prompt_tokens));
  metric(out, "prompt_seconds_total", "counter", "Backend time spent running prompts.",
         s.prompt_seconds);
  metric(out, "tokens_predicted_total", "counter", "Generated tokens of finished requests.",
         d(s.generated_tokens));
  metric(out, "tokens_predicted_seconds_total", "counter",
         "Time from each prompt's logits to its request's end.", s.decode_seconds);
  metric(out, "tokens_generated_total", "counter",
         "Generated tokens of every request, counted as they are sampled.", d(s.tokens_generated));
  metric(out, "tokens_per_second", "gauge", "Tokens generated per second over the last 10 s.",
         s.tokens_per_second);
  metric(out, "requests_finished_total", "counter",
         "Requests that ended on their own (stop, EOS, length).", d(s.finished));
  metric(out, "requests_cancelled_total", "counter",
         "Requests ended early (client gone, shutdown).", d(s.cancelled));
  metric(out, "requests_processing", "gauge", "Requests holding a sequence.", d(s.running));
  metric(out, "requests_deferred", "gauge", "Requests waiting for a sequence.", d(s.waiting));
  metric(out, "sequences_busy", "gauge", "Sequences holding a request.",
         d(static_cast<int64_t>(
             std::count_if(sequences.begin(), sequences.end(),
                           [](const SequenceState& q) { return q.request != 0; }))));
  metric(out, "draining", "gauge", "1 while shutting down: new requests get 503.",
         s.draining ? 1.0 : 0.0);
  metric(out, "sequences", "gauge", "Sequences generating at once (--parallel).",
         static_cast<double>(sequences.size()));
  metric(out, "kv_cache_tokens", "gauge", "Positions the sequences' caches hold.", d(cached));
  metric(out, "kv_cache_usage_ratio", "gauge",
         "Positions held over the positions all sequences can hold.",
         capacity > 0 ? static_cast<double>(cached) / capacity : 0.0);
  return out.str();
}

}  // namespace llama::server
