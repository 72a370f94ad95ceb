// llama-conformance's actions: run the suite, list checks and backends, version, help.
#include "conformance_run.hpp"

#include <iostream>

#include "backend_flags.hpp"
#include "conformance_data.hpp"
#include "conformance_options.hpp"
#include "conformance_report.hpp"
#include "conformance_suite.hpp"
#include "error_report.hpp"
#include "llama/error.hpp"
#include "llama/registry.hpp"
#include "llama/version.hpp"
#include "usage_error.hpp"

namespace llama::conformance {
namespace {

constexpr const char* kProgram = "llama-conformance";

void list_checks(std::ostream& out) {
  for (const SuiteCheck& c : suite_checks()) {
    out << c.id << "\t" << c.title << " (" << c.covers << ")\n";
  }
}

int run(const ConformanceOptions& o, std::ostream& out) {
  cli::load_plugins(o.plugins);  // a refused plugin is an error (exit 1)
  switch (o.action) {
    case Action::version:
      out << cli::version_line(kProgram) << "\n";
      return 0;
    case Action::list_backends:
      cli::list_backends(out);
      return 0;
    case Action::list_checks:
      list_checks(out);
      return 0;
    default:
      break;
  }
  for (const std::string& spec : o.backends) {
    try {
      (void)BackendRegistry::instance().create(spec);
    } catch (const Error& e) {
      throw cli::UsageError(std::string("--backend: ") + e.what());
    }
  }
  const ConformanceData data(default_data_dirs(o.models_dir, o.reference_dir));
  const bool text = o.format == ReportFormat::text;
  bool ok = true;
  nlohmann::json reports = nlohmann::json::array();
  for (const std::string& spec : o.backends) {
    if (text) write_heading(spec, out);
    const SuiteReport r = run_suite(data, spec, o.checks, [&](const CheckOutcome& c) {
      if (text) write_check_line(c, out << std::flush);
      out << std::flush;
    });
    if (text) write_verdict(r, out);
    reports.push_back(report_json(r));
    ok = ok && r.ok();
  }
  if (!text) {
    const nlohmann::json j{{"program", kProgram},
                           {"version", LLAMA_BACKENDS_VERSION},
                           {"backends", reports},
                           {"ok", ok}};
    out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
  return ok ? 0 : 1;
}

}  // namespace

int run_conformance(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return cli::run_reporting_errors(kProgram, err, [&] {
    try {
      const ConformanceOptions o = parse_conformance(args);
      if (o.action == Action::help) {
        out << o.help_text;
        return 0;
      }
      return run(o, out);
    } catch (const cli::UsageError& e) {
      return cli::report_usage_error(kProgram, err, e.what());
    }
  });
}

}  // namespace llama::conformance
