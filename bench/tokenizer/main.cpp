// llama-tokenizer-bench: how long a tokenizer takes to load and how much
// memory it keeps, and how fast it encodes a text on one thread.
//   llama-tokenizer-bench -k TOKENIZER [-f TEXT] [--seconds S] [--format text|json]
// TOKENIZER is anything open_tokenizer reads (tokenizer.bin, tokenizer.json or
// a directory); TEXT defaults to ../shared/models/stories1M-val.txt.
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "backend_flags.hpp"
#include "command_line.hpp"
#include "error_report.hpp"
#include "llama/error.hpp"
#include "llama/tokenizers/tokenizer.hpp"
#include "usage_error.hpp"

namespace po = boost::program_options;

namespace {

using Clock = std::chrono::steady_clock;

// This thread's CPU time: on a busy machine the wall clock also counts waiting.
double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// VmRSS / VmHWM of this process in KiB.
long status_kib(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::string key = std::string(field) + ":";
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) return std::stol(line.substr(key.size()));
  }
  return -1;
}

// Resets VmHWM to the current RSS (Linux >= 4.0), so the peak is the load's.
void reset_peak() { std::ofstream("/proc/self/clear_refs") << "5"; }

int run(const std::vector<std::string>& args) {
  std::string tokenizer, text_path = LLAMA_MODELS_DIR "/stories1M-val.txt", format = "text";
  double seconds = 2.0;
  po::options_description desc("Usage: llama-tokenizer-bench -k TOKENIZER [options]\nOptions");
  desc.add_options()("tokenizer,k", po::value(&tokenizer)->value_name("PATH"),
                     "tokenizer.bin, tokenizer.json or a directory (required)")(
      "file,f", po::value(&text_path)->value_name("TEXT"), "text to encode")(
      "seconds", po::value(&seconds)->value_name("S"), "encode for at least S seconds (default 2)")(
      "format", po::value(&format)->value_name("text|json"), "output (default text)")(
      "version", "print the version and exit")("help,h", "show this help");
  po::variables_map vm = llama::cli::parse_command_line(desc, args);
  if (vm.count("help")) {
    std::cout << desc;
    return 0;
  }
  if (vm.count("version")) {
    std::cout << llama::cli::version_line("llama-tokenizer-bench") << "\n";
    return 0;
  }
  if (tokenizer.empty()) throw llama::cli::UsageError("--tokenizer: required (-k PATH)");
  if (!(seconds > 0 && seconds < 3600))
    throw llama::cli::UsageError("--seconds: must be in (0, 3600)");
  if (format != "text" && format != "json") throw llama::cli::UsageError("--format: text or json");

  std::ifstream in(text_path, std::ios::binary);
  if (!in) throw llama::Error(text_path + ": cannot open");
  std::ostringstream all;
  all << in.rdbuf();
  const std::string text = all.str();
  if (text.empty()) throw llama::Error(text_path + ": is empty");

  const long rss_before = status_kib("VmRSS");
  reset_peak();
  const auto t0 = Clock::now();
  const double c0 = cpu_ms();
  const std::unique_ptr<llama::Tokenizer> tok = llama::open_tokenizer(tokenizer);
  const double load_ms = ms_since(t0), load_cpu_ms = cpu_ms() - c0;
  const long peak = status_kib("VmHWM"), rss_after = status_kib("VmRSS");

  size_t tokens = 0, runs = 0;
  const auto t1 = Clock::now();
  const double c1 = cpu_ms();
  double encode_ms = 0;
  do {
    tokens += tok->encode(text, {.add_special = false}).size();
    ++runs;
    encode_ms = ms_since(t1);
  } while (encode_ms < seconds * 1000.0);
  const double encode_cpu_ms = cpu_ms() - c1;
  const double mb = static_cast<double>(text.size()) * static_cast<double>(runs) / 1e6;
  const double mb_per_s = mb / (encode_ms / 1000.0), mb_per_cpu_s = mb / (encode_cpu_ms / 1000.0);

  std::error_code ec;
  const bool dir = std::filesystem::is_directory(tokenizer, ec);
  std::ifstream file(dir ? tokenizer + "/tokenizer.json" : tokenizer,
                     std::ios::binary | std::ios::ate);
  const long file_kib = file ? static_cast<long>(file.tellg()) / 1024 : -1;
  const nlohmann::json j{{"tokenizer", tokenizer},
                         {"kind", tok->description()},
                         {"vocab_size", tok->vocab_size()},
                         {"load_ms", load_ms},
                         {"load_cpu_ms", load_cpu_ms},
                         {"load_rss_kib", rss_after - rss_before},
                         {"load_peak_rss_kib", peak - rss_before},
                         {"file_kib", file_kib},
                         {"text", text_path},
                         {"text_bytes", text.size()},
                         {"tokens_per_pass", tokens / runs},
                         {"passes", runs},
                         {"encode_mb_per_s", mb_per_s},
                         {"encode_mb_per_cpu_s", mb_per_cpu_s}};
  if (format == "json") {
    std::cout << j.dump() << "\n";
  } else {
    std::printf(
        "%s (%s, %lld entries)\n  load %.1f ms (%.1f ms CPU), resident +%.1f MiB "
        "(peak +%.1f MiB), file %.1f MiB\n"
        "  encode %.2f MB/s on one thread (%.2f MB per CPU second; %zu bytes -> %zu tokens, "
        "%zu passes)\n",
        tokenizer.c_str(), tok->description().c_str(), static_cast<long long>(tok->vocab_size()),
        load_ms, load_cpu_ms, static_cast<double>(rss_after - rss_before) / 1024.0,
        static_cast<double>(peak - rss_before) / 1024.0, static_cast<double>(file_kib) / 1024.0,
        mb_per_s, mb_per_cpu_s, text.size(), tokens / runs, runs);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  constexpr const char* kProgram = "llama-tokenizer-bench";
  return llama::cli::run_reporting_errors(kProgram, std::cerr, [&] {
    try {
      return run(args);
    } catch (const llama::cli::UsageError& e) {
      return llama::cli::report_usage_error(kProgram, std::cerr, e.what());
    }
  });
}
