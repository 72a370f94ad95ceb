// Parses llama-cli's flags with Boost.Program_options and checks their ranges.
#include "cli_options.hpp"

#include <boost/program_options.hpp>
#include <cmath>
#include <filesystem>
#include <sstream>

namespace po = boost::program_options;

namespace llama::cli {

CliOptions parse_cli(const std::vector<std::string>& args) {
  CliOptions o;
  std::string format = "text";
  int64_t steps = 256;
  int64_t threads = 0;
  double temperature = 0.0, top_p = 0.9;
  std::string seed;

  po::options_description desc("Usage: llama-cli -c CHECKPOINT [options]\nOptions");
  desc.add_options()("checkpoint,c", po::value(&o.checkpoint)->value_name("FILE"),
                     "llama2.c checkpoint (required)")(
      "tokenizer,k", po::value(&o.tokenizer)->value_name("FILE"),
      "tokenizer.bin (default: beside the checkpoint, else ./tokenizer.bin)")(
      "temperature,t", po::value(&temperature)->value_name("NUM"),
      "sampling temperature, 0 = greedy (default 0)")(
      "top-p", po::value(&top_p)->value_name("NUM"),
      "nucleus sampling threshold in [0,1] (default 0.9)")(
      "steps,s", po::value(&steps)->value_name("NUM"),
      "positions to run, prompt included; 0 = seq_len (default 256)")(
      "prompt,p", po::value(&o.prompt)->value_name("TEXT"), "prompt (default empty)")(
      "seed,r", po::value(&seed)->value_name("NUM"), "random seed (default: the time)")(
      "backend,b", po::value(&o.backend)->value_name("NAME"),
      "backend, or wrapper:backend (default blas)")(
      "threads,j", po::value(&threads)->value_name("NUM"), "threads (default: all cores)")(
      "format", po::value(&format)->value_name("text|json"), "output format (default text)")(
      "list-backends", "list registered backends and wrappers, then exit")(
      "verify-checkpoint", "print per-tensor statistics; exit 1 if any value is not finite")(
      "tokenize", "print the prompt's tokens and exit")(
      "explain", "prepare the backend and print what it built, then exit")(
      "version", "print version and BLAS information")("help,h", "show this help");

  std::ostringstream help;
  help << desc;
  o.help_text = help.str();

  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(desc).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }

  if (vm.count("help"))
    o.action = Action::help;
  else if (vm.count("version"))
    o.action = Action::version;
  else if (vm.count("list-backends"))
    o.action = Action::list_backends;
  else if (vm.count("verify-checkpoint"))
    o.action = Action::verify_checkpoint;
  else if (vm.count("tokenize"))
    o.action = Action::tokenize;
  else if (vm.count("explain"))
    o.action = Action::explain;
  if (o.action == Action::help || o.action == Action::version ||
      o.action == Action::list_backends) {
    return o;
  }

  if (o.checkpoint.empty()) throw UsageError("--checkpoint: required (-c FILE)");
  if (!std::isfinite(temperature) || temperature < 0) {
    throw UsageError("--temperature: must be a finite number >= 0, got " +
                     std::to_string(temperature));
  }
  if (!(top_p >= 0.0 && top_p <= 1.0)) {
    throw UsageError("--top-p: must be in [0, 1], got " + std::to_string(top_p));
  }
  if (steps < 0) throw UsageError("--steps: must be >= 0, got " + std::to_string(steps));
  if (vm.count("threads") && (threads < 1 || threads > 1024)) {
    throw UsageError("--threads: must be in [1, 1024], got " + std::to_string(threads));
  }
  if (format == "text")
    o.format = OutputFormat::text;
  else if (format == "json")
    o.format = OutputFormat::json;
  else
    throw UsageError("--format: must be text or json, got '" + format + "'");
  if (o.backend.empty()) throw UsageError("--backend: must not be empty");

  o.temperature = static_cast<float>(temperature);
  o.top_p = static_cast<float>(top_p);
  o.steps = steps;
  o.threads = static_cast<int>(threads);
  if (vm.count("seed")) {
    // Parsed by hand: lexical_cast would wrap "-5" into a huge unsigned value.
    size_t used = 0;
    uint64_t value = 0;
    try {
      if (seed.empty() || seed[0] == '-' || seed[0] == '+') throw std::invalid_argument(seed);
      value = std::stoull(seed, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != seed.size()) {
      throw UsageError("--seed: must be a non-negative integer, got '" + seed + "'");
    }
    if (value != 0) o.seed = value;
  }
  return o;
}

std::string resolve_tokenizer_path(const CliOptions& options) {
  if (!options.tokenizer.empty()) return options.tokenizer;
  const auto beside = std::filesystem::path(options.checkpoint).parent_path() / "tokenizer.bin";
  std::error_code ec;
  if (std::filesystem::exists(beside, ec)) return beside.string();
  return "tokenizer.bin";
}

}  // namespace llama::cli
