// llama-cli's actions: generate, chat, tokenize, verify, explain, list, version.
#include "cli_run.hpp"

#include <chrono>
#include <cmath>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "backend_flags.hpp"
#include "chat.hpp"
#include "cli_options.hpp"
#include "error_report.hpp"
#include "flag_files.hpp"
#include "llama/chat_session.hpp"
#include "llama/error.hpp"
#include "llama/formats/gguf_model.hpp"
#include "llama/generate.hpp"
#include "llama/kernels/dispatch/bf16_unit.hpp"
#include "llama/kernels/dispatch/cpu_features.hpp"
#include "llama/registry.hpp"
#include "llama/tokenizers/tokenizer.hpp"
#include "model_context.hpp"
#include "opened_checkpoint.hpp"
#include "verify_checkpoint.hpp"
#include "verify_gguf.hpp"

namespace llama::cli {
namespace {

constexpr const char* kProgram = "llama-cli";

int tokenize(const CliOptions& o, const Tokenizer& tok, std::ostream& out,
             const chat::ModelChatTemplate* embedded = nullptr) {
  // Chat: the rendered first turn, as the model sees it.
  std::vector<int32_t> tokens;
  if (o.mode == Mode::chat) {
    const std::optional<chat::TemplateChatFormat> format = chat_format(o, tok, embedded);
    tokens = first_turn_tokens(o, tok, format ? &*format : nullptr);
  } else {
    tokens = tok.encode(o.prompt, {.add_special = true, .parse_special = o.parse_special});
  }
  if (o.format == OutputFormat::json) {
    nlohmann::json pieces = nlohmann::json::array();
    for (int32_t t : tokens) pieces.push_back(std::string(tok.piece(t)));
    nlohmann::json j{{"tokenizer", tok.description()},
                     {"prompt_tokens", tokens},
                     {"pieces", pieces},
                     {"text", tok.decode(tokens, /*skip_special=*/true)}};
    out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    for (int32_t t : tokens) out << t << "\t" << tok.piece(t) << "\n";
  }
  return 0;
}

nlohmann::json logprobs_json(const std::vector<GeneratedLogprob>& logprobs) {
  nlohmann::json out = nlohmann::json::array();
  for (const GeneratedLogprob& g : logprobs) {
    nlohmann::json top = nlohmann::json::array();
    for (size_t i = 0; i < g.value.top.size(); ++i) {
      top.push_back({{"id", g.value.top[i].id},
                     {"piece", g.top_pieces[i]},
                     {"logprob", g.value.top[i].logprob}});
    }
    out.push_back(
        {{"id", g.value.id}, {"piece", g.piece}, {"logprob", g.value.logprob}, {"top", top}});
  }
  return out;
}

int generate_text(const CliOptions& o, const OpenedCheckpoint& ck, const Model& model,
                  const Tokenizer& tok, InferenceBackend& backend, double load_ms,
                  std::ostream& out, std::ostream& err) {
  const uint64_t seed = o.seed ? *o.seed : static_cast<uint64_t>(std::time(nullptr));
  Sampler sampler(model.config.vocab_size, o.temperature, o.top_p, seed);
  GenerationOptions g;
  g.prompt = o.prompt;
  g.steps = o.steps;
  g.parse_special = o.parse_special;
  g.max_tokens = o.control.max_tokens;
  g.stop = o.control.stop;
  g.ignore_eos = o.control.ignore_eos;
  g.truncation = o.control.truncation;
  g.logprobs = o.control.logprobs;
  // llama2.c checkpoints carry no EOS ids: run.c's sampled BOS is their end;
  // Hugging Face models stop at their EOS ids, a GGUF at its EOS (and EOT) ids as llama.cpp does.
  ck.set_stopping(g);
  const bool text = o.format == OutputFormat::text;
  const auto run = [&] {
    return generate(backend, model.config, tok, sampler, g, [&](std::string_view piece) {
      if (text) out << piece << std::flush;
    });
  };
  GenerationResult r;
  try {
    r = run();
  } catch (const Error& e) {
    // The context is the checkpoint's (or --ctx-size): name both sides of the refusal.
    const std::string what = e.what();
    if (what.rfind("the prompt is ", 0) != 0) throw;
    throw Error("-p: " + what + " (" + o.checkpoint +
                (o.control.ctx_size > 0 ? ", --ctx-size" : "") +
                "; --truncate-prompt left|right keeps what fits)");
  }
  if (r.prompt_dropped > 0) {
    err << kProgram << ": the prompt is " << r.prompt_encoded
        << " tokens, longer than the context of " << model.config.seq_len << " positions: kept the "
        << (g.truncation == PromptTruncation::left ? "first " : "last ") << r.prompt_tokens.size()
        << " (--truncate-prompt " << to_string(g.truncation) << ")\n";
  }
  // What wrappers such as counting: and timing: observed; stderr keeps JSON clean.
  const std::string report = backend.report();
  if (text) {
    out << "\n";
    err << "achieved tok/s: " << r.decode_tok_per_s() << "\n" << report;
    return 0;
  }
  err << report;
  nlohmann::json j{{"backend", backend.name()},
                   {"prompt_tokens", r.prompt_tokens},
                   {"generated_tokens", r.generated_tokens},
                   {"text", r.text},
                   {"stop_reason", to_string(r.stop_reason)},
                   {"load_ms", load_ms},
                   {"prompt_tok_per_s", r.prompt_tok_per_s()},
                   {"decode_tok_per_s", r.decode_tok_per_s()}};
  if (r.stop_reason == StopReason::stop) j["stop_text"] = r.stop_text;
  if (r.prompt_dropped > 0) j["prompt_tokens_dropped"] = r.prompt_dropped;
  if (g.logprobs >= 0) j["logprobs"] = logprobs_json(r.logprobs);
  out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  return 0;
}

int run(const CliOptions& o, std::istream& in, std::ostream& out, std::ostream& err) {
  if (o.action == Action::help) {
    out << o.help_text;
    return 0;
  }
  load_plugins(o.plugins);
  switch (o.action) {
    case Action::version:
      out << version_line(kProgram) << "\n"
          << describe_cpu() << "\n"
          << describe_bf16_unit() << "\n";
      list_backends(out);
      return 0;
    case Action::list_backends:
      list_backends(out);
      return 0;
    default:
      break;
  }

  // Each stage names itself should memory run out in it (error_report.hpp).
  if (o.action == Action::tokenize && o.checkpoint.empty()) {
    // -k without -c: the whole tokenizer, no model to match.
    require_file_or_directory("--tokenizer", o.tokenizer);
    return during("reading " + o.tokenizer,
                  [&] { return tokenize(o, *open_tokenizer(o.tokenizer), out); });
  }
  const auto t0 = std::chrono::steady_clock::now();
  const OpenedCheckpoint ck =
      during("reading " + o.checkpoint, [&] { return OpenedCheckpoint::open(o.checkpoint); });
  if (o.action == Action::verify_checkpoint) {
    return during("verifying " + o.checkpoint, [&] {
      if (ck.hf()) return verify_checkpoint(*ck.hf(), out);
      return ck.gguf() ? verify_gguf(*ck.gguf(), out) : verify_checkpoint(*ck.llama2c(), out);
    });
  }
  const Model model = with_context(ck.model(), o.control.ctx_size);
  // A GGUF's own tokenizer unless -k names another.
  const std::string tokenizer_path =
      o.tokenizer.empty() && ck.gguf() ? o.checkpoint : resolve_tokenizer_path(o);
  const std::shared_ptr<const Tokenizer> tokenizer =
      during("reading " + tokenizer_path, [&] { return ck.tokenizer(o.tokenizer); });
  const Tokenizer& tok = *tokenizer;
  if (o.action == Action::tokenize) {
    return during("encoding the prompt", [&] { return tokenize(o, tok, out, ck.chat_template()); });
  }

  BackendOptions bo;
  bo.threads = o.threads;
  bo.numerics = o.numerics;
  bo.kv_cache = o.kv_cache;
  auto backend = BackendRegistry::instance().create(o.backend, bo);
  during("preparing backend " + o.backend + " for " + o.checkpoint,
         [&] { backend->prepare(model); });
  const double load_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (o.action == Action::explain) {
    if (ck.hf()) out << ck.hf()->describe();
    if (ck.gguf()) out << gguf::describe(*ck.gguf());
    const std::string d = backend->describe();
    out << "kernels: simd level " << describe_simd_level() << "\n"
        << (d.empty() ? backend->name() + ": the backend describes nothing\n" : d);
    return 0;
  }
  if (o.mode == Mode::chat) {
    const std::optional<chat::TemplateChatFormat> format = chat_format(o, tok, ck.chat_template());
    return run_chat(o, model, tok, *backend, format ? &*format : nullptr, in, out, err);
  }
  return during("generating",
                [&] { return generate_text(o, ck, model, tok, *backend, load_ms, out, err); });
}

}  // namespace

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return run_cli(args, std::cin, out, err);
}

int run_cli(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
            std::ostream& err) {
  CliOptions options;
  try {
    options = parse_cli(args);
  } catch (const UsageError& e) {
    return report_usage_error(kProgram, err, e.what());
  }
  return run_reporting_errors(kProgram, err, [&] { return run(options, in, out, err); });
}

}  // namespace llama::cli
