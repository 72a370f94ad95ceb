// Parsing llama-load's flags (load_options.hpp).
#include "load_options.hpp"

#include <boost/program_options.hpp>
#include <charconv>
#include <cmath>

#include "command_line.hpp"
#include "prompt_text.hpp"
#include "seed_flag.hpp"
#include "usage_error.hpp"

namespace po = boost::program_options;

namespace llama::load {
namespace {

using cli::UsageError;

std::vector<int> parse_levels(const std::string& text) {
  std::vector<int> levels;
  size_t at = 0;
  while (true) {
    const size_t comma = text.find(',', at);
    const std::string item =
        text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    int n = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), n);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() || n < 1 || n > 4096)
      throw UsageError("--concurrency: must be numbers in [1, 4096] separated by commas, got '" +
                       text + "'");
    levels.push_back(n);
    if (comma == std::string::npos) return levels;
    at = comma + 1;
  }
}

void check_range(const char* flag, double value, double lo, double hi) {
  if (!(value >= lo && value <= hi))
    throw UsageError(std::string("--") + flag + ": must be in [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "], got " + std::to_string(value));
}

}  // namespace

void parse_url(const std::string& url, std::string& host, int& port) {
  const std::string scheme = "http://";
  if (url.rfind("https://", 0) == 0)
    throw UsageError("--url: https is not supported, give http://HOST:PORT, got '" + url + "'");
  if (url.rfind(scheme, 0) != 0)
    throw UsageError("--url: must be http://HOST[:PORT], got '" + url + "'");
  std::string rest = url.substr(scheme.size());
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  if (rest.empty() || rest.find('/') != std::string::npos)
    throw UsageError("--url: must be http://HOST[:PORT] without a path, got '" + url + "'");
  const size_t colon = rest.rfind(':');
  port = 80;
  if (colon != std::string::npos) {
    const std::string digits = rest.substr(colon + 1);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || port < 1 ||
        port > 65535)
      throw UsageError("--url: bad port in '" + url + "'");
    rest.resize(colon);
  }
  if (rest.empty()) throw UsageError("--url: no host in '" + url + "'");
  host = rest;
}

LoadOptions parse_load_options(const std::vector<std::string>& args) {
  LoadOptions o;
  std::string endpoint = "completions", concurrency = "1", format = "text", seed;
  po::options_description desc("Usage: llama-load --url http://HOST:PORT [options]\nOptions");
  desc.add_options()("url", po::value(&o.url)->value_name("URL"),
                     "the server, http://HOST:PORT (default http://127.0.0.1:8080)")(
      "api-key", po::value(&o.api_key)->value_name("KEY"), "send 'Authorization: Bearer KEY'")(
      "endpoint", po::value(&endpoint)->value_name("NAME"),
      "completions (/v1/completions) or chat (/v1/chat/completions) (default completions)")(
      "concurrency", po::value(&concurrency)->value_name("N[,M...]"),
      "clients sending requests back to back; each level is a run (default 1)")(
      "requests", po::value(&o.requests)->value_name("N"),
      "requests per level (default 16 unless --duration)")(
      "duration", po::value(&o.duration)->value_name("SECONDS"),
      "send requests for this long per level instead of --requests")(
      "prompt", po::value(&o.prompt)->value_name("TEXT"), "the prompt of every request")(
      "prompt-tokens", po::value(&o.prompt_tokens)->value_name("N"),
      "a prompt of about N tokens from a fixed word list (default 128 unless --prompt)")(
      "distinct-prompts",
      "with --prompt-tokens: each request's prompt starts with 4 words of its own, so no "
      "server answers it from a cached prefix")(
      "max-tokens", po::value(&o.max_tokens)->value_name("N"),
      "tokens each request generates, with ignore_eos (default 128)")(
      "temperature", po::value(&o.temperature)->value_name("NUM"),
      "sampling temperature (default 0)")("seed", po::value(&seed)->value_name("NUM"),
                                          "the requests' seed (default: none sent)")(
      "warmup", po::value(&o.warmup)->value_name("N"),
      "requests before the first level, not measured (default 1)")(
      "model", po::value(&o.model)->value_name("NAME"),
      "the requests' model field (default: none)")(
      "format", po::value(&format)->value_name("text|json"), "report format (default text)")(
      "timeout", po::value(&o.timeout)->value_name("SECONDS"),
      "longest wait for the server's next bytes (default 600)")(
      "version", "print version information")("help,h", "show this help");
  o.help_text = cli::help_text(desc);
  const po::variables_map vm = cli::parse_command_line(desc, args);
  o.help = vm.count("help") > 0;
  o.version = vm.count("version") > 0;
  if (o.help || o.version) return o;

  parse_url(o.url, o.host, o.port);
  if (vm.count("api-key") && o.api_key.empty()) throw UsageError("--api-key: must not be empty");
  if (endpoint == "completions") {
    o.endpoint = Endpoint::completions;
  } else if (endpoint == "chat") {
    o.endpoint = Endpoint::chat;
  } else {
    throw UsageError("--endpoint: must be completions or chat, got '" + endpoint + "'");
  }
  o.concurrency = parse_levels(concurrency);
  if (vm.count("requests") && vm.count("duration"))
    throw UsageError("--duration: give either --requests or --duration, not both");
  if (vm.count("duration")) {
    check_range("duration", o.duration, 0.001, 86400);
    o.requests = 0;
  } else {
    if (!vm.count("requests")) o.requests = 16;
    check_range("requests", static_cast<double>(o.requests), 1, 1e9);
  }
  if (vm.count("prompt") && vm.count("prompt-tokens"))
    throw UsageError("--prompt-tokens: give either --prompt or --prompt-tokens, not both");
  if (vm.count("prompt")) {
    if (o.prompt.empty()) throw UsageError("--prompt: must not be empty");
  } else {
    if (!vm.count("prompt-tokens")) o.prompt_tokens = 128;
    check_range("prompt-tokens", static_cast<double>(o.prompt_tokens), 1, 1 << 20);
    o.prompt = prompt_of_tokens(o.prompt_tokens);
  }
  o.distinct_prompts = vm.count("distinct-prompts") > 0;
  if (o.distinct_prompts && o.prompt_tokens < kVariantWords) {
    throw UsageError("--distinct-prompts: needs --prompt-tokens of at least " +
                     std::to_string(kVariantWords));
  }
  check_range("max-tokens", static_cast<double>(o.max_tokens), 1, 1 << 24);
  check_range("temperature", o.temperature, 0, 2);
  if (vm.count("seed")) o.seed = cli::parse_seed(seed);
  check_range("warmup", static_cast<double>(o.warmup), 0, 1e6);
  if (format == "json") {
    o.json = true;
  } else if (format != "text") {
    throw UsageError("--format: must be text or json, got '" + format + "'");
  }
  check_range("timeout", o.timeout, 0.001, 86400);
  return o;
}

}  // namespace llama::load
