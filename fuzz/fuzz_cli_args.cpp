// libFuzzer target: llama-cli's argument parsing. The input is split at NUL
// bytes into arguments. parse_cli must either throw UsageError or return
// options within the documented ranges; a usage error reaches the user as one
// line and exit code 2; help, version and listing run fully.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "llama/error.hpp"

#include "cli_options.hpp"
#include "cli_run.hpp"
#include "fuzz_check.hpp"

namespace {

constexpr size_t kMaxArgs = 32;

// What the user sees of a failed run: `code` and exactly one line on stderr
// (run_cli turns an error's control characters, a newline in a file name
// among them, into escapes), nothing on stdout.
void check_one_line_exit(const std::vector<std::string>& args, int code, const char* what) {
  std::ostringstream out, err;
  FUZZ_CHECK(llama::cli::run_cli(args, out, err) == code, what);
  const std::string e = err.str();
  FUZZ_CHECK(e.rfind("llama-cli: ", 0) == 0, "error not prefixed");
  FUZZ_CHECK(e.find('\n') == e.size() - 1 && out.str().empty(), "error not one line");
}

void check_ranges(const llama::cli::CliOptions& o, const std::vector<std::string>& args) {
  using llama::cli::Action;
  if (o.action == Action::help || o.action == Action::version ||
      o.action == Action::list_backends) {
    std::ostringstream out, err;
    const std::vector<std::string> args = {o.action == Action::help      ? "--help"
                                           : o.action == Action::version ? "--version"
                                                                         : "--list-backends"};
    FUZZ_CHECK(llama::cli::run_cli(args, out, err) == 0, "informational action failed");
    FUZZ_CHECK(err.str().empty() && !out.str().empty(), "informational action output");
    return;
  }
  // --tokenize reads only the tokenizer, so -k alone is a complete request.
  const bool tokenizer_only = o.action == Action::tokenize && !o.tokenizer.empty();
  FUZZ_CHECK(tokenizer_only || !o.checkpoint.empty(), "accepted without a checkpoint");
  FUZZ_CHECK(std::isfinite(o.temperature) && o.temperature >= 0, "temperature out of range");
  FUZZ_CHECK(o.top_p >= 0 && o.top_p <= 1, "top-p out of range");
  FUZZ_CHECK(o.steps >= 0, "negative steps");
  FUZZ_CHECK(o.threads >= 0 && o.threads <= 1024, "threads out of range");
  FUZZ_CHECK(!o.backend.empty(), "empty backend");
  FUZZ_CHECK(!o.seed || *o.seed != 0, "seed 0 kept");
  try {
    FUZZ_CHECK(!llama::cli::resolve_tokenizer_path(o).empty(), "no tokenizer path");
  } catch (const llama::Error& e) {
    // A -c directory is looked into for a Hugging Face checkpoint; one that holds none is
    // the user's file error, which run_cli reports as one line and exit 1 ("-c /"). The
    // message names the path as given, which may hold any byte but NUL.
    FUZZ_CHECK(e.what()[0] != '\0', "empty file error");
    check_one_line_exit(args, 1, "file error exit code");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> args(1);
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      if (args.size() == kMaxArgs) return 0;
      args.emplace_back();
    } else {
      args.back().push_back(static_cast<char>(data[i]));
    }
  }
  try {
    check_ranges(llama::cli::parse_cli(args), args);
  } catch (const llama::cli::UsageError&) {
    check_one_line_exit(args, 2, "usage error exit code");
  }
  return 0;
}
