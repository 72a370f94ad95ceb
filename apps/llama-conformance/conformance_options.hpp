// llama-conformance's command line.
#pragma once

#include <string>
#include <vector>

namespace llama::conformance {

enum class Action { run, help, version, list_backends, list_checks };
enum class ReportFormat { text, json };

struct ConformanceOptions {
  Action action = Action::run;
  std::vector<std::string> backends;  // -b, comma-separated specs, each checked in turn
  std::vector<std::string> plugins;   // --plugin FILE, in order
  std::vector<std::string> checks;    // --check ID (repeatable); empty: every check
  std::string models_dir;             // --models; empty: the default
  std::string reference_dir;          // --reference; empty: the default
  ReportFormat format = ReportFormat::text;
  std::string help_text;
};

// Throws cli::UsageError naming the flag.
ConformanceOptions parse_conformance(const std::vector<std::string>& args);

}  // namespace llama::conformance
