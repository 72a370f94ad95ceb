// Test helpers: data paths, temp files, generated checkpoints, running llama-cli.
#include "test_support.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/generate.hpp"
#include "llama/registry.hpp"
#include "llama/tokenizers/llama2c_tokenizer.hpp"

namespace fs = std::filesystem;

namespace llama::test {
namespace {

std::string require_file(const std::string& dir, const std::string& file) {
  const fs::path p = fs::path(dir) / file;
  if (!fs::exists(p)) {
    FAIL("test data missing: " << p.string() << " (set -DLLAMA_MODELS_DIR/-DLLAMA_REFERENCE_DIR)");
  }
  return p.string();
}

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("llama-tests-" + std::to_string(::getpid()));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string shell_quote(const std::string& s) {
  std::string q;
  q.reserve(s.size() + 2);
  q.push_back('\'');
  for (char c : s) {
    if (c == '\'')
      q.append("'\\''");
    else
      q.push_back(c);
  }
  q.push_back('\'');
  return q;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

std::string model_path(const std::string& file) { return require_file(LLAMA_MODELS_DIR, file); }
std::string reference_path(const std::string& file) {
  return require_file(LLAMA_REFERENCE_DIR, file);
}

nlohmann::json load_json(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

void report_runnable(const std::string& what, const std::string& kind,
                     const std::vector<std::string>& run, const std::string& lacks) {
  std::cout << what << ": " << kind << " run:";
  for (const std::string& r : run) std::cout << ' ' << r;
  std::cout << "; not run, this CPU lacks:" << (lacks.empty() ? " nothing" : lacks) << "\n";
  if (!lacks.empty()) WARN(what << ": not run, this CPU lacks:" << lacks);
}

std::vector<float> random_floats(size_t n, uint32_t seed, float bound) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-bound, bound);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

std::vector<SimdLevel> runnable_levels(const std::string& what) {
  return runnable(what, "levels", kSimdLevels, simd_level_supported,
                  [](SimdLevel l) { return to_string(l); });
}

std::vector<KernelSet> runnable_kernel_sets(const std::string& what) {
  constexpr KernelSet kAll[] = {KernelSet::portable, KernelSet::avx2, KernelSet::avx_vnni,
                                KernelSet::avx512_vnni};
  return runnable(what, "kernel sets", kAll, kernel_set_available,
                  [](KernelSet k) { return to_string(k); });
}

std::string temp_path(const std::string& name) {
  static TempDir dir;
  return (dir.path / name).string();
}

void write_file(const std::string& path, const std::vector<std::byte>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

std::string llama2_chat_template_file(const std::string& name) {
  const std::string path = temp_path(name);
  const std::string t =
      "{% for m in messages %}{% if m['role'] == 'user' %}{{ bos_token }}[INST] "
      "{{ m['content'] }} [/INST]{% elif m['role'] == 'system' %}<<SYS>>{{ m['content'] }}"
      "<</SYS>>{% else %} {{ m['content'] }}{{ eos_token }}{% endif %}{% endfor %}";
  std::vector<std::byte> bytes(t.size());
  std::memcpy(bytes.data(), t.data(), t.size());
  write_file(path, bytes);
  return path;
}

std::vector<std::byte> read_file(const std::string& path) {
  const std::string s = slurp(path);
  const auto* p = reinterpret_cast<const std::byte*>(s.data());
  return {p, p + s.size()};
}

int64_t checkpoint_floats(const std::vector<int32_t>& h) {
  const int64_t dim = h[0], hidden = h[1], L = h[2], heads = h[3], kv_heads = h[4];
  const int64_t vocab = std::abs(h[5]), seq = h[6];
  const int64_t hs = dim / heads, kv = kv_heads * hs;
  int64_t n = vocab * dim + L * (2 * dim + 2 * dim * dim + 2 * kv * dim + 3 * dim * hidden) + dim +
              seq * hs;  // two half-size rope tables
  if (h[5] < 0) n += vocab * dim;
  return n;
}

std::vector<std::byte> make_checkpoint_bytes(const std::vector<int32_t>& header,
                                             int64_t weight_floats) {
  std::vector<std::byte> out;
  for (int32_t v : header) append(out, v);
  out.reserve(out.size() + static_cast<size_t>(weight_floats) * 4);
  for (int64_t i = 0; i < weight_floats; ++i) {
    append(out, static_cast<float>(std::sin(0.37 * static_cast<double>(i)) * 0.1));
  }
  return out;
}

std::string case_tokenizer_path(const nlohmann::json& c) {
  return model_path(c.value("tokenizer", std::string("tokenizer.bin")));
}

ProcessResult run_llama_cli(const std::vector<std::string>& args) {
  return run_program(LLAMA_CLI_PATH, args);
}

ProcessResult run_llama_cli_case(const nlohmann::json& c, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"-c",       model_path(c["model"]),
                                   "-k",       case_tokenizer_path(c),
                                   "-p",       c["prompt"],
                                   "-t",       std::to_string(c["temperature"].get<double>()),
                                   "--top-p",  std::to_string(c["top_p"].get<double>()),
                                   "-r",       std::to_string(c["seed"].get<int64_t>()),
                                   "-s",       std::to_string(c["steps"].get<int64_t>()),
                                   "--format", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_llama_cli(args);
}

std::vector<int32_t> json_stream(const nlohmann::json& j) {
  auto stream = j["prompt_tokens"].get<std::vector<int32_t>>();
  const auto generated = j["generated_tokens"].get<std::vector<int32_t>>();
  stream.insert(stream.end(), generated.begin(), generated.end());
  return stream;
}

ProcessResult run_program(const std::string& path, const std::vector<std::string>& args) {
  const std::string out_path = temp_path("cli-out-" + std::to_string(::getpid()));
  const std::string err_path = temp_path("cli-err-" + std::to_string(::getpid()));
  std::string cmd = shell_quote(path);
  for (const auto& a : args) {
    cmd.push_back(' ');
    cmd.append(shell_quote(a));
  }
  cmd.append(" >").append(shell_quote(out_path));
  cmd.append(" 2>").append(shell_quote(err_path));
  cmd.append(" </dev/null");
  const int status = std::system(cmd.c_str());
  ProcessResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  return r;
}

std::unique_ptr<InferenceBackend> make_backend(const std::string& spec, int threads) {
  BackendOptions o;
  o.threads = threads;
  return BackendRegistry::instance().create(spec, o);
}

std::vector<float> sequential_logits(InferenceBackend& backend, std::span<const int32_t> tokens) {
  std::vector<float> all;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const auto l = backend.forward(tokens[i], static_cast<int64_t>(i));
    all.insert(all.end(), l.begin(), l.end());
  }
  return all;
}

LogitAgreement compare_along_case(const Checkpoint& ck, const nlohmann::json& c,
                                  const std::string& spec, const std::string& against,
                                  int threads) {
  auto tested = make_backend(spec, threads);
  auto reference = make_backend(against, threads);
  tested->prepare(ck.model());
  reference->prepare(ck.model());
  const auto stream = c["stream"].get<std::vector<int32_t>>();
  const auto argmax = c["argmax"].get<std::vector<int32_t>>();
  LogitAgreement a;
  a.positions = std::min(stream.size(), static_cast<size_t>(ck.config().seq_len));
  for (size_t pos = 0; pos < a.positions; ++pos) {
    INFO("position " << pos);
    const auto t = tested->forward(stream[pos], static_cast<int64_t>(pos));
    const std::vector<float> got(t.begin(), t.end());
    const auto want = reference->forward(stream[pos], static_cast<int64_t>(pos));
    REQUIRE(got.size() == want.size());
    const double diff = relative_diff(got, want);
    if (diff > a.max_diff) {
      a.max_diff = diff;
      a.worst_position = pos;
    }
    if (pos < argmax.size()) {
      REQUIRE(std::max_element(got.begin(), got.end()) - got.begin() == argmax[pos]);
    }
  }
  return a;
}

double relative_diff(std::span<const float> a, std::span<const float> b) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(double(a[i]) - double(b[i])));
    scale = std::max(scale, std::abs(double(b[i])));
  }
  return diff / scale;
}

CaseStream generate_case(const Checkpoint& ck, const nlohmann::json& c, const std::string& spec,
                         int threads) {
  const Llama2cTokenizer tok(case_tokenizer_path(c), ck.config().vocab_size);
  auto backend = make_backend(spec, threads);
  backend->prepare(ck.model());
  Sampler sampler(ck.config().vocab_size, c["temperature"].get<float>(), c["top_p"].get<float>(),
                  c["seed"].get<uint64_t>());
  GenerationOptions g;
  g.prompt = c["prompt"].get<std::string>();
  g.steps = c["steps"].get<int64_t>();
  const GenerationResult r = generate(*backend, ck.config(), tok, sampler, g);
  CaseStream out{r.prompt_tokens, r.stop_reason == StopReason::bos};
  out.stream.insert(out.stream.end(), r.generated_tokens.begin(), r.generated_tokens.end());
  return out;
}

}  // namespace llama::test
