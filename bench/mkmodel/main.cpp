// llama-mkmodel: writes a llama2.c checkpoint with seeded random weights in a
// named shape or given dimensions, for benchmarks and tests.
#include <chrono>
#include <iostream>

#include "backend_flags.hpp"
#include "checkpoint_writer.hpp"
#include "error_report.hpp"
#include "llama/error.hpp"
#include "mkmodel_options.hpp"
#include "model_shape.hpp"
#include "usage_error.hpp"

namespace {

constexpr const char* kProgram = "llama-mkmodel";

int run(const llama::bench::MkmodelOptions& o) {
  using namespace llama::bench;
  if (o.action == MkmodelAction::help) {
    std::cout << o.help_text;
    return 0;
  }
  if (o.action == MkmodelAction::version) {
    std::cout << llama::cli::version_line(kProgram) << "\n";
    return 0;
  }
  if (o.action == MkmodelAction::list_shapes) {
    for (const NamedShape& s : named_shapes()) {
      std::cout << s.name << "\t" << s.config.to_string() << "\t" << checkpoint_file_bytes(s.config)
                << " bytes\n";
    }
    return 0;
  }
  const auto t0 = std::chrono::steady_clock::now();
  write_random_checkpoint(o.output, o.config, o.seed);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cerr << kProgram << ": wrote " << o.output << " (" << o.config.to_string() << ", seed "
            << o.seed << ", " << checkpoint_file_bytes(o.config) << " bytes) in " << s << " s\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  llama::bench::MkmodelOptions options;
  try {
    options = llama::bench::parse_mkmodel_options({argv + 1, argv + argc});
  } catch (const llama::cli::UsageError& e) {  // MkmodelUsageError, or --seed's
    return llama::cli::report_usage_error(kProgram, std::cerr, e.what());
  }
  return llama::cli::run_reporting_errors(kProgram, std::cerr, [&] { return run(options); });
}
