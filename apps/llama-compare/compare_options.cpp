// Parses llama-compare's flags: the shared generation flags plus the backend
// list, the tolerance and the output format.
#include "compare_options.hpp"

#include "backend_flags.hpp"
#include "command_line.hpp"
#include "kv_cache_flag.hpp"
#include "numerics_flag.hpp"

#include <boost/program_options.hpp>
#include <cmath>
#include <sstream>

namespace po = boost::program_options;

namespace llama::compare {
namespace {

std::vector<std::string> split_backends(const std::string& list) {
  std::vector<std::string> specs;
  std::stringstream in(list);
  std::string spec;
  while (std::getline(in, spec, ',')) {
    if (spec.empty()) throw cli::UsageError("--backend: empty name in '" + list + "'");
    specs.push_back(spec);
  }
  if (specs.size() < 2) {
    throw cli::UsageError("--backend: needs at least two backends, comma-separated, got '" + list +
                          "'");
  }
  return specs;
}

}  // namespace

CompareOptions parse_compare(const std::vector<std::string>& args) {
  CompareOptions o;
  cli::GenerationFlagParser generation;
  std::string backends, format = "text", numerics = "exact", kv_cache = "default";

  po::options_description desc(
      "Usage: llama-compare -c CHECKPOINT -b BASELINE,OTHER[,...] [options]\n"
      "Generates with the first backend, feeds its tokens to the others and compares logits.\n"
      "Exit 0 when every stream is identical and every difference within tolerance, else 1.\n"
      "Options");
  generation.add_to(desc);
  desc.add_options()("backend,b", po::value(&backends)->value_name("LIST"),
                     "comma-separated backends (or wrapper:backend), the first is the baseline "
                     "(required)")(
      "tolerance", po::value(&o.tolerance)->value_name("NUM"),
      "largest allowed logit difference relative to the largest |logit| (default 1e-4)")(
      "numerics", po::value(&numerics)->value_name("exact|fast|LIST"),
      "numerics policy of every backend, or a comma-separated list with one per backend: "
      "-b graph,graph --numerics exact,fast reports fast's difference from exact (default "
      "exact)")("kv-cache", po::value(&kv_cache)->value_name("f32|f16|LIST"),
                "KV cache type of every backend (default: the format's, GGUF f16, others f32), "
                "or a list with one per backend: -b blas,blas --kv-cache f32,f16 reports the "
                "f16 cache's difference")("format", po::value(&format)->value_name("text|json"),
                "output format (default text)")("version", "print the version and exit")(
      "help,h", "show this help");
  cli::add_backend_flags(desc, o.plugins);
  o.help_text = cli::help_text(desc);
  po::variables_map vm = cli::parse_command_line(desc, args);
  if (vm.count("help")) {
    o.help = true;
    return o;
  }
  o.version = vm.count("version") > 0;
  o.list_backends = vm.count("list-backends") > 0;
  if (o.version || o.list_backends) return o;
  o.run = generation.finish(vm);
  if (!vm.count("backend")) throw cli::UsageError("--backend: required (-b BASELINE,OTHER)");
  o.backends = split_backends(backends);
  {
    std::istringstream in(numerics);
    std::string one;
    while (std::getline(in, one, ',')) o.numerics.push_back(cli::parse_numerics_flag(one));
    if (o.numerics.size() == 1) o.numerics.resize(o.backends.size(), o.numerics.front());
    if (o.numerics.size() != o.backends.size()) {
      throw cli::UsageError("--numerics: " + std::to_string(o.numerics.size()) + " policies for " +
                            std::to_string(o.backends.size()) + " backends in '" + numerics + "'");
    }
  }
  {
    std::istringstream in(kv_cache);
    std::string one;
    while (std::getline(in, one, ',')) o.kv_cache.push_back(cli::parse_kv_cache_flag(one));
    if (o.kv_cache.size() == 1) o.kv_cache.resize(o.backends.size(), o.kv_cache.front());
    if (o.kv_cache.size() != o.backends.size()) {
      throw cli::UsageError("--kv-cache: " + std::to_string(o.kv_cache.size()) + " types for " +
                            std::to_string(o.backends.size()) + " backends in '" + kv_cache + "'");
    }
  }
  if (!std::isfinite(o.tolerance) || o.tolerance < 0) {
    throw cli::UsageError("--tolerance: must be a finite number >= 0, got " +
                          std::to_string(o.tolerance));
  }
  if (format == "text")
    o.format = OutputFormat::text;
  else if (format == "json")
    o.format = OutputFormat::json;
  else
    throw cli::UsageError("--format: must be text or json, got '" + format + "'");
  return o;
}

}  // namespace llama::compare
