// Parses llama-mkmodel's flags: a shape name gives every dimension, explicit
// dimension flags override it, and without a shape all of them are needed.
#include "mkmodel_options.hpp"

#include "seed_flag.hpp"

#include <boost/program_options.hpp>
#include <limits>
#include <optional>

#include "command_line.hpp"
#include "llama/error.hpp"
#include "model_shape.hpp"

namespace po = boost::program_options;

namespace llama::bench {

MkmodelOptions parse_mkmodel_options(const std::vector<std::string>& args) {
  MkmodelOptions o;
  std::string shape, classifier, seed;
  struct DimFlag {
    const char* flag;
    int64_t Config::*field;
    const char* help;
    std::optional<int64_t> value;
  };
  std::vector<DimFlag> dims{
      {"dim", &Config::dim, "transformer width", {}},
      {"hidden", &Config::hidden_dim, "feed-forward width", {}},
      {"layers", &Config::n_layers, "number of layers", {}},
      {"heads", &Config::n_heads, "query heads", {}},
      {"kv-heads", &Config::n_kv_heads, "key/value heads (default: heads)", {}},
      {"vocab", &Config::vocab_size, "vocabulary size", {}},
      {"seq", &Config::seq_len, "maximum positions", {}}};
  std::vector<int64_t> raw(dims.size(), 0);

  po::options_description desc(
      "Usage: llama-mkmodel -o FILE (--shape NAME | --dim N --hidden N --layers N --heads N "
      "--vocab N --seq N) [options]\nOptions");
  desc.add_options()("output,o", po::value(&o.output)->value_name("FILE"),
                     "checkpoint to write (required)")(
      "shape,s", po::value(&shape)->value_name("NAME"), "named shape (see --list-shapes)");
  for (size_t i = 0; i < dims.size(); ++i) {
    desc.add_options()(dims[i].flag, po::value(&raw[i])->value_name("N"), dims[i].help);
  }
  desc.add_options()("classifier", po::value(&classifier)->value_name("shared|separate"),
                     "classifier storage (default: the shape's, else shared)")(
      "seed,r", po::value(&seed)->value_name("NUM"), "random seed (default 42)")(
      "list-shapes", "list the named shapes and exit")("version", "print the version and exit")(
      "help,h", "show this help");
  o.help_text = cli::help_text(desc);
  po::variables_map vm = cli::parse_command_line(desc, args);
  if (vm.count("help")) {
    o.action = MkmodelAction::help;
    return o;
  }
  if (vm.count("version")) {
    o.action = MkmodelAction::version;
    return o;
  }
  if (vm.count("list-shapes")) {
    o.action = MkmodelAction::list_shapes;
    return o;
  }
  if (o.output.empty()) throw MkmodelUsageError("--output: required (-o FILE)");

  Config c;
  bool have_shape = false;
  if (vm.count("shape")) {
    try {
      c = shape_by_name(shape);
    } catch (const Error& e) {
      throw MkmodelUsageError(std::string("--shape: ") + e.what());
    }
    have_shape = true;
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    if (!vm.count(dims[i].flag)) continue;
    if (raw[i] < 1 || raw[i] > std::numeric_limits<int32_t>::max()) {
      throw MkmodelUsageError(std::string("--") + dims[i].flag +
                              ": must be in [1, 2147483647], got " + std::to_string(raw[i]));
    }
    c.*dims[i].field = raw[i];
  }
  if (!have_shape) {
    for (size_t i = 0; i < dims.size(); ++i) {
      if (std::string(dims[i].flag) == "kv-heads") continue;
      if (!vm.count(dims[i].flag)) {
        throw MkmodelUsageError(std::string("--") + dims[i].flag + ": required without --shape");
      }
    }
    if (!vm.count("kv-heads")) c.n_kv_heads = c.n_heads;
  }
  if (vm.count("classifier")) {
    if (classifier == "shared")
      c.shared_classifier = true;
    else if (classifier == "separate")
      c.shared_classifier = false;
    else
      throw MkmodelUsageError("--classifier: must be shared or separate, got '" + classifier + "'");
  }
  // The file holds the seven fields; run.c implies the rest.
  c = Config::llama2c(c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads, c.vocab_size,
                      c.seq_len, c.shared_classifier);
  try {
    c.validate("model");
  } catch (const Error& e) {
    throw MkmodelUsageError(e.what());
  }
  o.config = c;
  if (vm.count("seed")) o.seed = cli::parse_seed(seed);
  return o;
}

}  // namespace llama::bench
