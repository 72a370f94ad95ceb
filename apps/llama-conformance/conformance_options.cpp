// Parses llama-conformance's flags with Boost.Program_options.
#include "conformance_options.hpp"

#include <boost/program_options.hpp>
#include <sstream>

#include "backend_flags.hpp"
#include "command_line.hpp"
#include "conformance_suite.hpp"
#include "usage_error.hpp"

namespace po = boost::program_options;

namespace llama::conformance {

ConformanceOptions parse_conformance(const std::vector<std::string>& args) {
  ConformanceOptions o;
  std::string backends, format = "text";
  po::options_description desc(
      "Usage: llama-conformance -b SPEC[,SPEC...] [--plugin FILE] [options]\n"
      "Runs the conformance suite on each backend: logits against the reference backend,\n"
      "run.c's and runq.c's reference streams, forward_batch against forward, prepare\n"
      "again, bad calls, thread counts. Exit 0 when every check passes, 1 otherwise.\n"
      "Options");
  desc.add_options()("backend,b", po::value(&backends)->value_name("LIST"),
                     "backends (or wrapper:backend), comma-separated (required)")(
      "check", po::value(&o.checks)->value_name("ID")->composing(),
      "run only this check (repeatable; see --list-checks)")("list-checks",
                                                             "list the checks and exit")(
      "models", po::value(&o.models_dir)->value_name("DIR"),
      "checkpoints and tokenizer.bin (default $LLAMA_MODELS_DIR, else the build's "
      "../shared/models)")("reference", po::value(&o.reference_dir)->value_name("DIR"),
                           "parity.json and parity-q8.json (default $LLAMA_REFERENCE_DIR, else "
                           "the build's ../shared/reference)")(
      "format", po::value(&format)->value_name("text|json"), "report format (default text)")(
      "version", "print the version and exit")("help,h", "show this help");
  cli::add_backend_flags(desc, o.plugins);
  o.help_text = cli::help_text(desc);
  po::variables_map vm = cli::parse_command_line(desc, args);
  if (vm.count("help")) {
    o.action = Action::help;
  } else if (vm.count("version")) {
    o.action = Action::version;
  } else if (vm.count("list-backends")) {
    o.action = Action::list_backends;
  } else if (vm.count("list-checks")) {
    o.action = Action::list_checks;
  }
  if (o.action != Action::run) return o;

  if (format == "text")
    o.format = ReportFormat::text;
  else if (format == "json")
    o.format = ReportFormat::json;
  else
    throw cli::UsageError("--format: must be text or json, got '" + format + "'");
  if (!vm.count("backend")) throw cli::UsageError("--backend: required (-b SPEC)");
  std::stringstream list(backends);
  for (std::string spec; std::getline(list, spec, ',');) {
    if (spec.empty()) throw cli::UsageError("--backend: empty name in '" + backends + "'");
    o.backends.push_back(spec);
  }
  if (o.backends.empty() || backends.back() == ',') {
    throw cli::UsageError("--backend: empty name in '" + backends + "'");
  }
  for (const std::string& id : o.checks) {
    if (!is_check_id(id))
      throw cli::UsageError("--check: no check '" + id + "' (see --list-checks)");
  }
  if (vm.count("models") && o.models_dir.empty()) throw cli::UsageError("--models: empty path");
  if (vm.count("reference") && o.reference_dir.empty()) {
    throw cli::UsageError("--reference: empty path");
  }
  return o;
}

}  // namespace llama::conformance
