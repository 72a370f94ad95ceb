// llama-load: drives an OpenAI-compatible server (ours or llama.cpp's llama-server) with
// streamed requests at fixed concurrency levels and reports token rates, TTFT and ITL.
#include <atomic>
#include <iostream>

#include "backend_flags.hpp"
#include "error_report.hpp"
#include "load_options.hpp"
#include "load_report.hpp"
#include "load_run.hpp"
#include "prompt_text.hpp"
#include "stream_request.hpp"
#include "usage_error.hpp"

namespace {

constexpr const char* kProgram = "llama-load";

int run(const llama::load::LoadOptions& o) {
  using namespace llama::load;
  if (const auto why = unreachable(o)) {
    std::cerr << kProgram << ": cannot reach " << o.url << " (" << *why << " error)\n";
    return 1;
  }
  const std::string body = request_body(o, o.prompt);
  // Numbered across the run, warm-up included: every request of a run is distinct and
  // a run's prompts are the same every time.
  std::atomic<uint64_t> sent{0};
  const auto next_body = [&] {
    return o.distinct_prompts ? request_body(o, prompt_of_tokens(o.prompt_tokens, sent++)) : body;
  };
  if (o.warmup > 0) {
    // Warm-up answers are not measured, but a server failing them fails the run.
    const LevelSummary w = summarize(run_level(o, next_body, o.concurrency.front(), o.warmup, 0));
    if (w.failed > 0) {
      std::cerr << kProgram << ": warm-up request failed: " << w.errors.front().first << "\n";
      return 1;
    }
  }
  std::vector<LevelSummary> levels;
  bool failed = false;
  for (const int c : o.concurrency) {
    levels.push_back(summarize(run_level(o, next_body, c, o.requests, o.duration)));
    failed = failed || levels.back().failed > 0;
  }
  if (o.json) {
    std::cout << report_json(o, levels).dump(2) << "\n";
  } else {
    std::cout << report_text(o, levels);
  }
  return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  llama::load::LoadOptions options;
  try {
    options = llama::load::parse_load_options({argv + 1, argv + argc});
  } catch (const llama::cli::UsageError& e) {
    return llama::cli::report_usage_error(kProgram, std::cerr, e.what());
  }
  if (options.help) {
    std::cout << options.help_text;
    return 0;
  }
  if (options.version) {
    std::cout << llama::cli::version_line(kProgram) << "\n";
    return 0;
  }
  return llama::cli::run_reporting_errors(kProgram, std::cerr, [&] { return run(options); });
}
