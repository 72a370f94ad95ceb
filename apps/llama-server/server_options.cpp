// Parses llama-server's flags with the apps' shared parsers (server_options.hpp).
#include "server_options.hpp"

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <limits>

#include "backend_flags.hpp"
#include "command_line.hpp"
#include "kv_cache_flag.hpp"
#include "numerics_flag.hpp"
#include "seed_flag.hpp"
#include "usage_error.hpp"

namespace po = boost::program_options;

namespace llama::server {
namespace {

using cli::UsageError;

int64_t in_range(const po::variables_map& vm, const char* flag, int64_t value, int64_t lo,
                 int64_t hi) {
  if (vm.count(flag) && (value < lo || value > hi)) {
    throw UsageError(std::string("--") + flag + ": must be in [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "], got " + std::to_string(value));
  }
  return value;
}

}  // namespace

ServerOptions parse_server_options(const std::vector<std::string>& args) {
  ServerOptions o;
  int64_t parallel = o.parallel, port = o.port, threads = 0;
  double temperature = o.temperature, top_p = o.top_p;
  std::string seed, numerics, kv_cache;
  po::options_description desc("Usage: llama-server -c CHECKPOINT [options]\nOptions");
  // llama-cli's model and sampling flags, without the ones a request brings itself
  // (-p, -s): the shared GenerationFlagParser would list those too.
  desc.add_options()(
      "checkpoint,c", po::value(&o.checkpoint)->value_name("FILE"),
      "llama2.c checkpoint, or a Hugging Face directory (or its model.safetensors) (required)")(
      "tokenizer,k", po::value(&o.tokenizer)->value_name("FILE"),
      "tokenizer.bin, tokenizer.json or a directory holding tokenizer.json (default: as "
      "llama-cli finds it)")("temperature,t", po::value(&temperature)->value_name("NUM"),
                             "temperature of requests that give none, 0 = greedy (default 0)")(
      "top-p", po::value(&top_p)->value_name("NUM"),
      "top_p of requests that give none (default 0.9)")(
      "seed,r", po::value(&seed)->value_name("NUM"),
      "seed of requests that give none (default: the time)")(
      "threads,j", po::value(&threads)->value_name("NUM"), "threads (default: all cores)")(
      "backend,b", po::value(&o.backend)->value_name("NAME"),
      "backend, or wrapper:backend (default blas)")(
      "chat-template", po::value(&o.chat_template)->value_name("FILE"),
      "render chat messages with this Jinja template (or a tokenizer_config.json's) instead of "
      "the model's own")("parallel", po::value(&parallel)->value_name("N"),
                         "sequences generating at once (default 4)")(
      "ctx-size", po::value(&o.ctx_size)->value_name("N"),
      "positions each sequence holds, prompt included (default: the model's)")(
      "host", po::value(&o.host)->value_name("ADDR"), "address to listen on (default 127.0.0.1)")(
      "port", po::value(&port)->value_name("N"),
      "port to listen on; 0 picks a free one (default 8080)")(
      "api-key", po::value(&o.api_keys)->value_name("KEY"),
      "require 'Authorization: Bearer KEY' (repeatable: any of them)")(
      "max-body", po::value(&o.max_body)->value_name("BYTES"),
      "largest request body accepted (default 4194304)")(
      "queue", po::value(&o.queue)->value_name("N"),
      "requests that may wait for a sequence; more get 503 (default 64)")(
      "http-threads", po::value(&o.http_threads)->value_name("N"),
      "connections served at once (default: --parallel + --queue + 4, at most 512)")(
      "max-connections", po::value(&o.max_connections)->value_name("N"),
      "connections open at once, served or waiting for a thread; more get 503 (default: "
      "twice --http-threads)")(
      "timeout", po::value(&o.timeout)->value_name("SECONDS"),
      "a client that sends or reads nothing for this long is dropped (default 600)")(
      "drain-timeout", po::value(&o.drain_timeout)->value_name("SECONDS"),
      "on SIGINT/SIGTERM, how long requests in flight may run on before they end with "
      "finish_reason length (default 10)")("log-prompts",
                                           "log each request's prompt text (default: never)")(
      "version", "print version information")("help,h", "show this help");
  cli::add_backend_flags(desc, o.plugins);
  cli::add_numerics_flag(desc, numerics);
  cli::add_kv_cache_flag(desc, kv_cache);
  o.help_text = cli::help_text(desc);
  const po::variables_map vm = cli::parse_command_line(desc, args);
  if (vm.count("help")) {
    o.action = Action::help;
    return o;
  }
  if (vm.count("version")) {
    o.action = Action::version;
    return o;
  }
  if (vm.count("list-backends")) {
    o.action = Action::list_backends;
    return o;
  }
  if (o.checkpoint.empty()) throw UsageError("--checkpoint: required (-c FILE)");
  if (vm.count("tokenizer") && o.tokenizer.empty())
    throw UsageError("--tokenizer: must name a file or directory, got ''");
  if (!std::isfinite(temperature) || temperature < 0 ||
      temperature > std::numeric_limits<float>::max()) {
    throw UsageError("--temperature: must be a finite number >= 0, got " +
                     std::to_string(temperature));
  }
  if (!(top_p >= 0.0 && top_p <= 1.0))
    throw UsageError("--top-p: must be in [0, 1], got " + std::to_string(top_p));
  o.temperature = static_cast<float>(temperature);
  o.top_p = static_cast<float>(top_p);
  if (vm.count("seed")) {
    const uint64_t value = cli::parse_seed(seed);
    if (value != 0) o.seed = value;  // 0: the time, as llama-cli
  }
  o.threads = static_cast<int>(in_range(vm, "threads", threads, 1, 1024));
  if (o.backend.empty()) throw UsageError("--backend: must not be empty");
  if (vm.count("chat-template") && o.chat_template.empty())
    throw UsageError("--chat-template: must name a file, got ''");
  o.parallel = static_cast<int32_t>(in_range(vm, "parallel", parallel, 1, 256));
  o.ctx_size = in_range(vm, "ctx-size", o.ctx_size, 1, int64_t{1} << 24);
  o.port = static_cast<int>(in_range(vm, "port", port, 0, 65535));
  if (o.host.empty()) throw UsageError("--host: must not be empty");
  for (const std::string& key : o.api_keys) {
    if (key.empty()) throw UsageError("--api-key: must not be empty");
  }
  in_range(vm, "max-body", o.max_body, 1, int64_t{1} << 30);
  in_range(vm, "queue", o.queue, 0, 100000);
  if (!vm.count("http-threads")) o.http_threads = std::min<int64_t>(o.parallel + o.queue + 4, 512);
  in_range(vm, "http-threads", o.http_threads, 1, 4096);
  if (!vm.count("max-connections")) o.max_connections = 2 * o.http_threads;
  in_range(vm, "max-connections", o.max_connections, o.http_threads, 65536);
  in_range(vm, "timeout", o.timeout, 1, 86400);
  in_range(vm, "drain-timeout", o.drain_timeout, 0, 86400);
  o.log_prompts = vm.count("log-prompts") > 0;
  o.numerics = cli::parse_numerics_flag(numerics);
  o.kv_cache = cli::parse_kv_cache_flag(kv_cache);
  return o;
}

}  // namespace llama::server
