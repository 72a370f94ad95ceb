// llama-template --template FILE --messages FILE.json [--bos-token S]
// [--eos-token S] [--add-generation-prompt]: prints exactly what a chat
// template renders for a conversation (no newline added), or the template's
// error on one line with exit 1.
#include "template_run.hpp"

#include <boost/program_options.hpp>

#include "backend_flags.hpp"
#include "command_line.hpp"
#include "error_report.hpp"
#include "flag_files.hpp"
#include "llama/chat/json_value.hpp"
#include "llama/chat/model_template.hpp"
#include "llama/chat/template.hpp"
#include "llama/error.hpp"
#include "usage_error.hpp"

namespace po = boost::program_options;

namespace llama::chat_app {
namespace {

constexpr const char* kProgram = "llama-template";

struct Options {
  std::string template_path, messages_path, bos_token, eos_token, help;
  bool bos_given = false, eos_given = false;
  bool add_generation_prompt = false;
  bool show_help = false;
  bool show_version = false;
};

Options parse(const std::vector<std::string>& args) {
  Options o;
  po::options_description desc(
      "Usage: llama-template --template FILE --messages FILE.json [options]\n"
      "Prints what a Jinja chat template renders for a conversation: FILE.json is a list of\n"
      "OpenAI-style messages ({\"role\": ..., \"content\": ...}) or an object whose keys are\n"
      "the template's variables (messages, tools, ...).\nOptions");
  desc.add_options()("template", po::value(&o.template_path)->value_name("FILE"),
                     "the chat template (Jinja source), or a tokenizer_config.json holding one "
                     "(its bos_token and eos_token become the defaults); required")(
      "messages", po::value(&o.messages_path)->value_name("FILE.json"),
      "the conversation, required")("bos-token", po::value(&o.bos_token)->value_name("S"),
                                    "bos_token (default empty)")(
      "eos-token", po::value(&o.eos_token)->value_name("S"), "eos_token (default empty)")(
      "add-generation-prompt", po::bool_switch(&o.add_generation_prompt),
      "end with the assistant's turn header")("version", "print the version and exit")(
      "help,h", "show this help");
  o.help = cli::help_text(desc);
  po::variables_map vm = cli::parse_command_line(desc, args);
  if (vm.count("help") || vm.count("version")) {
    o.show_help = vm.count("help") > 0;
    o.show_version = !o.show_help;
    return o;
  }
  o.bos_given = vm.count("bos-token") > 0;
  o.eos_given = vm.count("eos-token") > 0;
  if (o.template_path.empty()) throw cli::UsageError("--template: required (--template FILE)");
  if (o.messages_path.empty()) throw cli::UsageError("--messages: required (--messages FILE.json)");
  return o;
}

bool ends_with_json(const std::string& path) {
  return path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
}

// Each stage names itself should memory run out in it (error_report.hpp); each file
// is read through the bounded reader with the limit of what it is (flag_files.hpp).
int render(const Options& o, std::ostream& out) {
  std::string source, bos = o.bos_token, eos = o.eos_token;
  if (ends_with_json(o.template_path)) {  // a tokenizer_config.json
    const chat::ModelChatTemplate t = cli::during("reading " + o.template_path, [&] {
      return chat::parse_tokenizer_config(
          cli::read_flag_file("--template", o.template_path, cli::kMaxTokenizerConfigBytes,
                              "a tokenizer_config.json"),
          o.template_path);
    });
    if (t.source.empty()) throw Error(o.template_path + ": has no chat_template");
    source = t.source;
    if (!o.bos_given) bos = t.bos_token;
    if (!o.eos_given) eos = t.eos_token;
  } else {
    source = cli::during("reading " + o.template_path, [&] {
      return cli::read_flag_file("--template", o.template_path, cli::kMaxChatTemplateBytes,
                                 "a chat template");
    });
  }
  chat::Object vars = cli::during("reading " + o.messages_path, [&] {
    return chat::variables_from_json(cli::read_flag_file("--messages", o.messages_path,
                                                         cli::kMaxMessagesBytes, "a conversation"),
                                     o.messages_path);
  });
  const auto set_default = [&](const std::string& key, chat::Value v) {
    for (const auto& [k, x] : vars) {
      if (k == key) return;  // the JSON's own value wins
    }
    vars.emplace_back(key, std::move(v));
  };
  set_default("bos_token", chat::Value::string(bos));
  set_default("eos_token", chat::Value::string(eos));
  set_default("add_generation_prompt", chat::Value::boolean(o.add_generation_prompt));
  try {
    const chat::ChatTemplate t = cli::during("parsing " + o.template_path,
                                             [&] { return chat::ChatTemplate::parse(source); });
    out << cli::during("rendering " + o.template_path, [&] { return t.render(vars); })
        << std::flush;
  } catch (const chat::TemplateError& e) {
    throw Error(o.template_path + ": " + e.what());
  }
  return 0;
}

}  // namespace

int run_template(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  Options o;
  try {
    o = parse(args);
  } catch (const cli::UsageError& e) {
    return cli::report_usage_error(kProgram, err, e.what());
  }
  if (o.show_help) {
    out << o.help;
    return 0;
  }
  if (o.show_version) {
    out << cli::version_line(kProgram) << "\n";
    return 0;
  }
  return cli::run_reporting_errors(kProgram, err, [&] { return render(o, out); });
}

}  // namespace llama::chat_app
