// Parses llama-cli's flags with Boost.Program_options and checks their ranges.
#include "cli_options.hpp"

#include <boost/program_options.hpp>

#include "backend_flags.hpp"
#include "command_line.hpp"
#include "kv_cache_flag.hpp"
#include "numerics_flag.hpp"

namespace po = boost::program_options;

namespace llama::cli {

CliOptions parse_cli(const std::vector<std::string>& args) {
  CliOptions o;
  std::string format = "text";
  std::string mode = "generate";
  GenerationFlagParser generation;
  ControlFlagParser control;

  po::options_description desc("Usage: llama-cli -c CHECKPOINT [options]\nOptions");
  generation.add_to(desc);
  control.add_to(desc);
  desc.add_options()("backend,b", po::value(&o.backend)->value_name("NAME"),
                     "backend, or wrapper:backend (default blas)")(
      "format", po::value(&format)->value_name("text|json"), "output format (default text)")(
      "mode,m", po::value(&mode)->value_name("generate|chat"),
      "generate (default), or chat: run.c's Llama 2 chat; the first user message is -p, "
      "later ones are lines of standard input")("system-prompt,y",
                                                po::value(&o.system_prompt)->value_name("TEXT"),
                                                "chat: system prompt of the first turn")(
      "chat-template", po::value(&o.chat_template)->value_name("FILE"),
      "chat: render turns with this Jinja template (or a tokenizer_config.json's) instead of "
      "the model's own")("verify-checkpoint",
                         "print per-tensor statistics; exit 1 if any value is not finite")(
      "tokenize", "print the prompt's tokens and exit (needs no checkpoint when -k is given)")(
      "no-parse-special", "treat text that spells an added token (<s>, <|eot_id|>) as plain text")(
      "explain", "prepare the backend and print what it built, then exit")(
      "version", "print version and BLAS information")("help,h", "show this help");
  add_backend_flags(desc, o.plugins);
  std::string numerics;
  add_numerics_flag(desc, numerics);
  std::string kv_cache;
  add_kv_cache_flag(desc, kv_cache);

  o.help_text = cli::help_text(desc);
  po::variables_map vm = cli::parse_command_line(desc, args);

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

  // --tokenize reads only the tokenizer, so -k alone is enough.
  const bool tokenizer_only = o.action == Action::tokenize && vm.count("tokenizer") > 0;
  const GenerationFlags g = generation.finish(vm, !tokenizer_only);
  o.parse_special = vm.count("no-parse-special") == 0;
  if (format == "text")
    o.format = OutputFormat::text;
  else if (format == "json")
    o.format = OutputFormat::json;
  else
    throw UsageError("--format: must be text or json, got '" + format + "'");
  o.control = control.finish(vm, o.format == OutputFormat::json);
  if (mode == "chat") {
    for (const char* flag : {"max-tokens", "stop", "ignore-eos", "truncate-prompt", "logprobs"}) {
      if (vm.count(flag))
        throw UsageError(std::string("--") + flag + ": only applies to --mode generate");
    }
  }
  if (o.backend.empty()) throw UsageError("--backend: must not be empty");
  if (mode == "generate")
    o.mode = Mode::generate;
  else if (mode == "chat")
    o.mode = Mode::chat;
  else
    throw UsageError("--mode: must be generate or chat, got '" + mode + "'");
  if (vm.count("chat-template") && o.mode != Mode::chat) {
    throw UsageError("--chat-template: only applies to --mode chat");
  }
  if (vm.count("system-prompt") && o.mode != Mode::chat) {
    throw UsageError("--system-prompt: only applies to --mode chat");
  }
  o.prompt_given = vm.count("prompt") > 0;

  o.checkpoint = g.checkpoint;
  o.tokenizer = g.tokenizer;
  o.prompt = g.prompt;
  o.temperature = g.temperature;
  o.top_p = g.top_p;
  o.steps = g.steps;
  o.seed = g.seed;
  o.threads = g.threads;
  o.numerics = parse_numerics_flag(numerics);
  o.kv_cache = parse_kv_cache_flag(kv_cache);
  return o;
}

std::string resolve_tokenizer_path(const CliOptions& options) {
  return resolve_tokenizer_path(options.checkpoint, options.tokenizer);
}

}  // namespace llama::cli
