// Shared test helpers: where the shared models and reference cases are,
// scratch files, and running llama-cli as a process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ranges>
#include <span>
#include <string>
#include <vector>

#include "llama/kernels/dispatch/cpu_features.hpp"
#include "llama/kernels/dispatch/kernel_set.hpp"

namespace llama {
class Checkpoint;
class InferenceBackend;
}  // namespace llama

namespace llama::test {

// Sets environment variable `name` to `value` (unset for nullptr) for a scope,
// then puts back what was there: for the overrides the library reads on each
// call (LLAMA_BF16_UNIT, LLAMA_Q8_KERNEL) and for llama-cli processes started
// inside the scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

// A backend from the registry by spec ("blas", "counting:graph"), with `threads` (0: all).
std::unique_ptr<InferenceBackend> make_backend(const std::string& spec, int threads = 0);

// The logits of one forward per token, at positions 0, 1, ..., back to back
// (f32 [tokens.size(), vocab_size]); `backend` must be freshly prepared.
std::vector<float> sequential_logits(InferenceBackend& backend, std::span<const int32_t> tokens);

// Runs `spec` and `against` (both `threads`) one forward per position along
// reference case `c`'s stream on `ck`, REQUIREs `spec`'s argmax to match the
// case's recorded one, and reports the worst relative logit difference.
struct LogitAgreement {
  size_t positions = 0;       // positions compared
  double max_diff = 0;        // largest relative_diff(spec, against) over them
  size_t worst_position = 0;  // where it was
};
LogitAgreement compare_along_case(const Checkpoint& ck, const nlohmann::json& c,
                                  const std::string& spec, const std::string& against,
                                  int threads = 0);

// Largest |a - b| relative to the largest |b|.
double relative_diff(std::span<const float> a, std::span<const float> b);

// A reference case (parity.json fields: prompt, temperature, top_p, seed, steps)
// generated on `spec` with checkpoint `ck` and the case's tokenizer (case_tokenizer_path).
struct CaseStream {
  std::vector<int32_t> stream;  // prompt tokens (BOS first) then the sampled ones
  bool stopped_at_bos = false;
};
CaseStream generate_case(const Checkpoint& ck, const nlohmann::json& c, const std::string& spec,
                         int threads = 0);

// A reference case's tokenizer under ../shared/models: its `tokenizer` field
// (parity-stories1M.json: tok2048.bin), else the Llama 2 tokenizer.bin.
std::string case_tokenizer_path(const nlohmann::json& c);

// Paths under ../shared; fail the test loudly when a file is missing.
std::string model_path(const std::string& file);
std::string reference_path(const std::string& file);
nlohmann::json load_json(const std::string& path);

// Prints "WHAT: KIND run: a b; not run, this CPU lacks: c d" ("nothing"
// where `lacks` is empty), and a Catch warning naming what was not run.
void report_runnable(const std::string& what, const std::string& kind,
                     const std::vector<std::string>& run, const std::string& lacks);

// The items of `all` (SIMD levels, kernel paths: anything with a to_string)
// that available(item) says this CPU runs, in all's order, after
// report_runnable: every item the CPU lacks is named by lacking(item) (why,
// if the caller likes), with `also_lacking` appended (what the list cannot
// hold, such as kernels inside a library), so a test over them says what it
// did not run and never counts it as passed.
template <typename List, typename Available, typename Lacking>
auto runnable(const std::string& what, const std::string& kind, const List& all,
              Available available, Lacking lacking, const std::string& also_lacking = "") {
  std::vector<std::ranges::range_value_t<List>> out;
  std::vector<std::string> run;
  std::string lacks;
  for (const auto& item : all) {
    if (available(item)) {
      out.push_back(item);
      run.emplace_back(to_string(item));
    } else {
      lacks += ' ';
      lacks += lacking(item);
    }
  }
  report_runnable(what, kind, run, lacks + also_lacking);
  return out;
}

// f32 [n] uniform in [-bound, bound) from mt19937(seed): the kernels tests'
// inputs, the same values for the same seed on every run.
std::vector<float> random_floats(size_t n, uint32_t seed, float bound);

// The SIMD levels this CPU runs (kSimdLevels' order), through runnable():
// "WHAT: levels run: ...; not run, this CPU lacks: ...".
std::vector<SimdLevel> runnable_levels(const std::string& what);

// The product kernel sets this CPU runs (portable, avx2, avx512_vnni), through
// runnable(): "WHAT: kernel sets run: ...; not run, this CPU lacks: ...".
std::vector<KernelSet> runnable_kernel_sets(const std::string& what);

// A file under a per-process temporary directory, removed at exit.
std::string temp_path(const std::string& name);
void write_file(const std::string& path, const std::vector<std::byte>& bytes);
std::vector<std::byte> read_file(const std::string& path);
// A Jinja chat template in the shape of Llama 2's, written to temp_path(name), for the
// server tests' chat routes (stories1M has none of its own); returns its path.
std::string llama2_chat_template_file(const std::string& name);

// Appends the bytes of a trivially copyable value.
template <typename T>
void append(std::vector<std::byte>& out, const T& v) {
  const size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &v, sizeof(T));
}

// A legacy checkpoint with the given header and `weight_floats` f32 values
// drawn from a fixed sequence (not necessarily a consistent size).
std::vector<std::byte> make_checkpoint_bytes(const std::vector<int32_t>& header,
                                             int64_t weight_floats);
// Floats a consistent legacy checkpoint of that header needs after the header.
int64_t checkpoint_floats(const std::vector<int32_t>& header);

struct ProcessResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
// Runs the program at `path` with `args` (shell-quoted here) and captures its output.
ProcessResult run_program(const std::string& path, const std::vector<std::string>& args);
// run_program for llama-cli.
ProcessResult run_llama_cli(const std::vector<std::string>& args);
// llama-cli --format json on a reference case (model, prompt, temperature,
// top_p, seed, steps) with the case's tokenizer, then `extra` arguments.
ProcessResult run_llama_cli_case(const nlohmann::json& c, const std::vector<std::string>& extra);
// A llama-cli --format json output's prompt_tokens followed by generated_tokens.
std::vector<int32_t> json_stream(const nlohmann::json& j);

}  // namespace llama::test
