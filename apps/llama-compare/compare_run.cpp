// llama-compare: option handling, backend creation, the comparison and its report.
#include "compare_run.hpp"

#include "backend_flags.hpp"
#include "error_report.hpp"

#include <algorithm>
#include <ctime>
#include <memory>

#include "compare_options.hpp"
#include "compare_report.hpp"
#include "comparison.hpp"
#include "llama/error.hpp"
#include "llama/registry.hpp"
#include "llama/tokenizers/tokenizer.hpp"
#include "opened_checkpoint.hpp"

namespace llama::compare {
namespace {

constexpr const char* kProgram = "llama-compare";

int run(const CompareOptions& o, std::ostream& out, std::ostream& err) {
  cli::load_plugins(o.plugins);  // a refused plugin is an error (exit 1), not bad usage
  if (o.version) {
    out << cli::version_line(kProgram) << "\n";
    return 0;
  }
  if (o.list_backends) {
    cli::list_backends(out);
    return 0;
  }
  BackendOptions bo;
  bo.threads = o.run.threads;
  std::vector<std::unique_ptr<InferenceBackend>> owned;
  try {
    for (size_t i = 0; i < o.backends.size(); ++i) {
      bo.numerics = o.numerics[i];
      bo.kv_cache = o.kv_cache[i];
      owned.push_back(BackendRegistry::instance().create(o.backends[i], bo));
    }
  } catch (const Error& e) {
    throw cli::UsageError(std::string("--backend: ") + e.what());
  }
  std::vector<InferenceBackend*> backends;
  for (const auto& b : owned) backends.push_back(b.get());

  const cli::OpenedCheckpoint ck = cli::OpenedCheckpoint::open(o.run.checkpoint);
  const std::shared_ptr<const Tokenizer> tokenizer = ck.tokenizer(o.run.tokenizer);
  const Tokenizer& tok = *tokenizer;
  CompareSettings s;
  s.prompt = o.run.prompt;
  s.steps = o.run.steps;
  s.temperature = o.run.temperature;
  s.top_p = o.run.top_p;
  s.seed = o.run.seed ? *o.run.seed : static_cast<uint64_t>(std::time(nullptr));
  GenerationOptions stopping;
  ck.set_stopping(stopping);
  s.eos = stopping.eos;
  s.stop_at_bos = stopping.stop_at_bos;

  Comparison c = compare_backends(backends, ck.model(), tok, s);
  // With policies that differ, every name says its own (graph (fast numerics)).
  if (std::any_of(o.numerics.begin(), o.numerics.end(),
                  [&](Numerics n) { return n != o.numerics.front(); })) {
    const auto label = [](Numerics n) { return std::string(" (") + to_string(n) + " numerics)"; };
    c.baseline += label(o.numerics.front());
    for (size_t i = 0; i < c.backends.size(); ++i)
      c.backends[i].backend += label(o.numerics[i + 1]);
  }
  if (std::any_of(o.kv_cache.begin(), o.kv_cache.end(),
                  [&](KvCacheOption k) { return k != o.kv_cache.front(); })) {
    const auto label = [](KvCacheOption k) {
      return std::string(" (") + to_string(k) + " KV cache)";
    };
    c.baseline += label(o.kv_cache.front());
    for (size_t i = 0; i < c.backends.size(); ++i)
      c.backends[i].backend += label(o.kv_cache[i + 1]);
  }
  if (o.format == OutputFormat::json)
    write_json(c, o.tolerance, s.seed, out);
  else
    write_text(c, o.tolerance, s.seed, out);
  for (const auto& b : owned) err << b->report();  // what wrappers observed
  return c.ok(o.tolerance) ? 0 : 1;
}

}  // namespace

int run_compare(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return cli::run_reporting_errors(kProgram, err, [&] {
    try {
      // Backend names are checked against the registry in run(): also bad usage.
      const CompareOptions options = parse_compare(args);
      if (options.help) {
        out << options.help_text;
        return 0;
      }
      return run(options, out, err);
    } catch (const cli::UsageError& e) {
      return cli::report_usage_error(kProgram, err, e.what());
    }
  });
}

}  // namespace llama::compare
