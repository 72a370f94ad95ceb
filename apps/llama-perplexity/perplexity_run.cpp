// llama-perplexity -c MODEL [-k TOKENIZER] -f TEXT [--ctx N] [-b BACKEND]
// [-j N] [--format text|json]: the model's perplexity on a text file with
// llama.cpp's llama-perplexity semantics (llama/perplexity.hpp).
#include "perplexity_run.hpp"

#include <boost/program_options.hpp>
#include <chrono>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "backend_flags.hpp"
#include "command_line.hpp"
#include "error_report.hpp"
#include "flag_files.hpp"
#include "generation_flags.hpp"  // resolve_tokenizer_path
#include "kv_cache_flag.hpp"
#include "llama/error.hpp"
#include "llama/perplexity.hpp"
#include "llama/registry.hpp"
#include "llama/tokenizers/llama2c_tokenizer.hpp"
#include "llama/tokenizers/tokenizer.hpp"
#include "numerics_flag.hpp"
#include "opened_checkpoint.hpp"
#include "usage_error.hpp"

namespace po = boost::program_options;

namespace llama::perplexity_app {
namespace {

constexpr const char* kProgram = "llama-perplexity";
// Evaluation texts are a few MB (wikitext-2's test split is 1.3 MB); 64 MiB holds
// any of them many times over and bounds the tokens (4 bytes each, at most one per
// byte) to 256 MiB. A text that large runs for hours: progress goes to stderr.
constexpr int64_t kMaxTextBytes = int64_t{64} << 20;
// Above this, "encoding ..." is printed first: encoding alone takes seconds.
constexpr size_t kAnnounceEncodingBytes = size_t{1} << 20;

enum class Format { text, json };

struct Options {
  std::string checkpoint, tokenizer, file, backend = "blas", help;
  int64_t ctx = 0;
  int64_t threads = 0;
  Format format = Format::text;
  bool show_help = false;
  bool show_version = false;
  bool list_backends = false;
  std::vector<std::string> plugins;  // --plugin FILE, in order
  std::string numerics = "exact";    // --numerics
  Numerics policy = Numerics::exact;
  std::string kv_cache_text = "default";  // --kv-cache
  KvCacheOption kv_cache = KvCacheOption::model_default;
};

Options parse(const std::vector<std::string>& args) {
  Options o;
  std::string format = "text";
  po::options_description desc(
      "Usage: llama-perplexity -c CHECKPOINT -f TEXT [options]\n"
      "Perplexity with llama.cpp's llama-perplexity semantics: the text encoded with BOS\n"
      "first, whole chunks of --ctx tokens (each starting with BOS), the second half of\n"
      "each chunk scored.\nOptions");
  desc.add_options()("checkpoint,c", po::value(&o.checkpoint)->value_name("FILE"),
                     "llama2.c checkpoint, or a Hugging Face directory (required)")(
      "tokenizer,k", po::value(&o.tokenizer)->value_name("FILE"),
      "tokenizer.bin (default: beside the checkpoint, else ./tokenizer.bin)")(
      "file,f", po::value(&o.file)->value_name("TEXT"), "the text file (required)")(
      "ctx", po::value(&o.ctx)->value_name("N"),
      "tokens per chunk (default: the model's seq_len, at most 512)")(
      "backend,b", po::value(&o.backend)->value_name("NAME"), "backend (default blas)")(
      "threads,j", po::value(&o.threads)->value_name("NUM"), "threads (default: all cores)")(
      "format", po::value(&format)->value_name("text|json"), "output format (default text)")(
      "version", "print the version and exit")("help,h", "show this help");
  cli::add_backend_flags(desc, o.plugins);
  cli::add_numerics_flag(desc, o.numerics);
  cli::add_kv_cache_flag(desc, o.kv_cache_text);
  o.help = cli::help_text(desc);
  po::variables_map vm = cli::parse_command_line(desc, args);
  if (vm.count("help")) {
    o.show_help = true;
    return o;
  }
  o.show_version = vm.count("version") > 0;
  o.list_backends = vm.count("list-backends") > 0;
  if (o.show_version || o.list_backends) return o;
  if (o.checkpoint.empty()) throw cli::UsageError("--checkpoint: required (-c FILE)");
  if (o.file.empty()) throw cli::UsageError("--file: required (-f TEXT)");
  if (vm.count("ctx") && o.ctx < 2) {
    throw cli::UsageError("--ctx: must be at least 2, got " + std::to_string(o.ctx));
  }
  if (vm.count("threads") && (o.threads < 1 || o.threads > 1024)) {
    throw cli::UsageError("--threads: must be in [1, 1024], got " + std::to_string(o.threads));
  }
  if (o.backend.empty()) throw cli::UsageError("--backend: must not be empty");
  o.policy = cli::parse_numerics_flag(o.numerics);
  o.kv_cache = cli::parse_kv_cache_flag(o.kv_cache_text);
  if (format == "text")
    o.format = Format::text;
  else if (format == "json")
    o.format = Format::json;
  else
    throw cli::UsageError("--format: must be text or json, got '" + format + "'");
  return o;
}

// Where `text` stops being UTF-8 text (a NUL byte is taken as a binary file), or -1.
// Perplexity on bytes that are not text measures nothing, and a binary file of tens
// of MB would otherwise be encoded and run for hours before anyone noticed.
int64_t first_non_text_byte(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    const unsigned char c = p[i];
    if (c == 0) return static_cast<int64_t>(i);
    if (c < 0x80) {
      ++i;
      continue;
    }
    // Lead byte: its sequence length and the range its first continuation byte may
    // take (no overlong forms, no surrogates, nothing above U+10FFFF).
    size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return static_cast<int64_t>(i);
    }
    if (n - i < len) return static_cast<int64_t>(i);
    if (p[i + 1] < lo || p[i + 1] > hi) return static_cast<int64_t>(i);
    for (size_t k = 2; k < len; ++k) {
      if (p[i + k] < 0x80 || p[i + k] > 0xBF) return static_cast<int64_t>(i);
    }
    i += len;
  }
  return -1;
}

// -f: a regular file of at most kMaxTextBytes, not empty, UTF-8 text.
std::string read_text(const std::string& path) {
  std::string text = cli::read_flag_file("--file", path, kMaxTextBytes, "a perplexity text");
  if (text.empty()) throw Error("--file: " + path + ": the text is empty");
  if (const int64_t at = first_non_text_byte(text); at >= 0) {
    const auto byte = static_cast<unsigned char>(text[static_cast<size_t>(at)]);
    throw Error("--file: " + path + ": not UTF-8 text (byte 0x" + "0123456789abcdef"[byte >> 4] +
                "0123456789abcdef"[byte & 15] + " at offset " + std::to_string(at) + ")");
  }
  return text;
}

// Progress on stderr: one line rewritten in place on a terminal, else a line at
// every tenth of the chunks and at least every 30 s, so a long run shows it is
// alive long before its first tenth is done.
PerplexityProgress progress_printer(std::ostream& err, bool tty) {
  using Clock = std::chrono::steady_clock;
  return [&err, tty, last = Clock::now()](int64_t done, int64_t chunks, double ppl) mutable {
    std::ostringstream line;
    line << kProgram << ": chunk " << done << "/" << chunks << ", perplexity " << std::fixed
         << std::setprecision(4) << ppl;
    if (tty) {
      err << "\r" << line.str() << (done == chunks ? "\n" : "") << std::flush;
      return;
    }
    const Clock::time_point now = Clock::now();
    if (done == chunks || done % std::max<int64_t>(1, chunks / 10) == 0 ||
        now - last >= std::chrono::seconds(30)) {
      err << line.str() << "\n" << std::flush;
      last = now;
    }
  };
}

int run(const Options& o, std::ostream& out, std::ostream& err, bool tty) {
  cli::load_plugins(o.plugins);
  if (o.show_version) {
    out << cli::version_line(kProgram) << "\n";
    return 0;
  }
  if (o.list_backends) {
    cli::list_backends(out);
    return 0;
  }
  // Each stage names itself should memory run out in it (error_report.hpp). The
  // text first: a wrong -f fails before the model is loaded.
  const std::string text = cli::during("reading " + o.file, [&] { return read_text(o.file); });
  // A Hugging Face model's KV cache holds --ctx positions (its context is the bound).
  const cli::OpenedCheckpoint ck = cli::during("reading " + o.checkpoint, [&] {
    return cli::OpenedCheckpoint::open(o.checkpoint, o.ctx > 0 ? o.ctx : kDefaultHfContextCap);
  });
  const Config& config = ck.config();
  if (o.ctx > config.seq_len) {
    throw Error(
        "--ctx: " + std::to_string(o.ctx) + " is larger than the model's context (" +
        (config.context_length == config.seq_len ? "seq_len " : "max_position_embeddings ") +
        std::to_string(config.context_length) + ")");
  }
  const std::shared_ptr<const Tokenizer> tok =
      cli::during("reading the tokenizer", [&] { return ck.tokenizer(o.tokenizer); });
  if (tok->special().bos < 0) throw Error("the tokenizer has no BOS token to start chunks with");
  if (text.size() > kAnnounceEncodingBytes) {
    err << kProgram << ": encoding " << o.file << " (" << text.size() << " bytes)\n" << std::flush;
  }
  // Untrusted text: what spells a special token stays text.
  const std::vector<int32_t> tokens = cli::during("encoding " + o.file, [&] {
    return tok->encode(text, {.add_special = true, .parse_special = false});
  });
  BackendOptions bo;
  bo.threads = static_cast<int>(o.threads);
  bo.numerics = o.policy;
  bo.kv_cache = o.kv_cache;
  auto backend = BackendRegistry::instance().create(o.backend, bo);
  cli::during("preparing backend " + o.backend + " for " + o.checkpoint,
              [&] { backend->prepare(ck.model()); });
  PerplexityOptions po_;
  po_.ctx = o.ctx;
  po_.bos = tok->special().bos;
  const PerplexityResult r = cli::during("computing the perplexity of " + o.file, [&] {
    try {
      return perplexity(*backend, config, tokens, po_, progress_printer(err, tty));
    } catch (const Error& e) {
      throw Error(o.file + ": " + e.what());
    }
  });
  err << backend->report();
  if (o.format == Format::json) {
    nlohmann::json j{{"backend", backend->name()},
                     {"text_tokens", r.text_tokens},
                     {"ctx", r.ctx},
                     {"chunks", r.chunks},
                     {"scored", r.scored},
                     {"perplexity", r.perplexity},
                     {"perplexity_stderr", r.perplexity_stderr},
                     {"mean_nll", r.mean_nll},
                     {"nll_stderr", r.nll_stderr},
                     {"seconds", r.seconds},
                     {"tokens_per_s", r.tokens_per_s()}};
    out << j.dump() << "\n";
    return 0;
  }
  out << std::fixed << std::setprecision(4) << "perplexity: " << r.perplexity << " +/- "
      << r.perplexity_stderr << "\n"
      << std::setprecision(5) << "mean NLL: " << r.mean_nll << " +/- " << r.nll_stderr
      << " (natural log)\n"
      << "tokens: " << r.text_tokens << " in the text, " << r.chunks << " chunks of " << r.ctx
      << ", " << r.scored << " scored\n"
      << std::setprecision(0) << "speed: " << r.tokens_per_s() << " tokens/s on " << backend->name()
      << "\n";
  return 0;
}

}  // namespace

int run_perplexity(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
                   bool progress_on_tty) {
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
  return cli::run_reporting_errors(kProgram, err,
                                   [&] { return run(o, out, err, progress_on_tty); });
}

}  // namespace llama::perplexity_app
