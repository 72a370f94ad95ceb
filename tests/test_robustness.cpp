// Robustness: memory asked for before it is taken, errors that name the file
// and the field or offset at fault, and regressions for what fuzzing found.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>

#include "llama/error.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/memory_budget.hpp"
#include "llama/registry.hpp"
#include "llama/tokenizers/llama2c_tokenizer.hpp"
#include "test_support.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using llama::Checkpoint;
using llama::Config;
using namespace llama::test;

namespace {

Config config_of(const std::vector<int32_t>& h) {
  Config c = Config::from_header(h.data());
  c.validate("test header");
  return c;
}

// A checkpoint file with `header` and exactly the size it implies; the weights
// are a hole (zeros), so a file of many GiB costs no disk.
std::string sparse_checkpoint(const std::string& name, const std::vector<int32_t>& header) {
  const std::string p = temp_path(name);
  write_file(p, make_checkpoint_bytes(header, 0));
  std::filesystem::resize_file(
      p, static_cast<uintmax_t>(Checkpoint::kHeaderBytes + 4 * checkpoint_floats(header)));
  return p;
}

// dim 2, one head, 1000 layers, vocab 512, seq_len 2,000,000,000: the file
// (rope tables included) is 16 GB, the KV cache 32 TB.
const std::vector<int32_t> kAbsurdSeqLen = {2, 1, 1000, 1, 1, 512, 2000000000};

// Runs the dtypes it is given and nothing else: only admit() asks anything of it.
class AdmitOnly final : public llama::InferenceBackend {
 public:
  explicit AdmitOnly(llama::DTypeSet dtypes, int32_t sequences = 1)
      : dtypes_(dtypes), sequences_(sequences) {}
  std::string name() const override { return "admit-only"; }
  llama::DTypeSet supported_dtypes() const override { return dtypes_; }
  int32_t sequences() const override { return sequences_; }
  void prepare(const llama::Model&) override {}
  std::span<const float> forward(int32_t, int64_t) override { return {}; }

 private:
  llama::DTypeSet dtypes_;
  int32_t sequences_;
};

}  // namespace

TEST_CASE("the run-state estimate is run.c's RunState", "[robustness][memory]") {
  // stories260K's shape: kv_dim = 4 kv heads * head size 8 = 32.
  const Config c = config_of({64, 172, 5, 8, 4, 512, 512});
  const int64_t kv_floats = 2 * 5 * 512 * 32;
  CHECK(llama::kv_cache_bytes(c) == 4 * kv_floats);
  // x, xb, xb2, q; hb, hb2; att [n_heads, seq_len]; logits; the KV cache.
  CHECK(llama::run_state_bytes(c) == 4 * (4 * 64 + 2 * 172 + 8 * 512 + 512 + kv_floats));
}

TEST_CASE("require_memory names the bytes needed and available", "[robustness][memory]") {
  const llama::MemoryAvailable budget{1000, "a test budget"};
  CHECK_NOTHROW(llama::require_memory(1000, "the thing", budget, "model.bin"));
  CHECK_THROWS_WITH(llama::require_memory(1001, "the thing", budget, "model.bin"),
                    StartsWith("model.bin: the thing needs 1001 bytes") &&
                        Contains("only 1000 bytes") && Contains("a test budget"));
}

TEST_CASE("available memory comes from the machine", "[robustness][memory]") {
  const llama::MemoryAvailable a = llama::available_memory();
  INFO(a.source << ": " << a.bytes);
  const int64_t physical =
      static_cast<int64_t>(::sysconf(_SC_PHYS_PAGES)) * ::sysconf(_SC_PAGESIZE);
  CHECK(a.bytes > 0);
  CHECK(a.bytes <= physical);
  CHECK_FALSE(a.source.empty());
}

TEST_CASE("seq_len 2000000000 exceeds an 8 GiB machine", "[robustness][memory]") {
  // One layer: KV cache 2 * 2e9 * kv_dim 2 floats = 32 GB, scores 8 GB.
  const Config c = config_of({2, 1, 1, 1, 1, 512, 2000000000});
  CHECK(llama::run_state_bytes(c) > int64_t{40'000'000'000});
  const llama::MemoryAvailable eight_gib{int64_t{8} << 30, "an 8 GiB budget"};
  CHECK_THROWS_WITH(
      llama::require_memory(llama::run_state_bytes(c), "the run state", eight_gib, "absurd.bin"),
      Contains("absurd.bin") && Contains(std::to_string(int64_t{8} << 30)));
}

TEST_CASE("every backend refuses an absurd KV cache in prepare before allocating",
          "[robustness][memory][bad-input]") {
  const std::string p = sparse_checkpoint("absurd-seq-len.bin", kAbsurdSeqLen);
  const Checkpoint ck = Checkpoint::open(p);  // the file is consistent: only memory is absurd
  for (const std::string& name : llama::BackendRegistry::instance().backend_names()) {
    INFO("backend " << name);
    auto backend = llama::BackendRegistry::instance().create(name);
    CHECK_THROWS_WITH(backend->prepare(ck.model()),
                      StartsWith(p) && Contains("seq_len 2000000000") && Contains("needs") &&
                          Contains("available") && Contains("refused before allocating"));
  }
}

TEST_CASE("admit refuses a dtype before the memory, then gives the KV cache's dtype",
          "[robustness][memory]") {
  using llama::DType;
  using llama::KvCacheOption;
  const std::string p = sparse_checkpoint("admit-absurd.bin", kAbsurdSeqLen);
  const Checkpoint absurd = Checkpoint::open(p);
  // Both refusals apply: the dtype's is the one given.
  CHECK_THROWS_WITH(llama::admit(absurd.model(), AdmitOnly({DType::q8_0}), {}),
                    StartsWith("admit-only: tensor ") &&
                        Contains(" is f32, which admit-only does not run (it runs q8_0)"));
  CHECK_THROWS_WITH(
      llama::admit(absurd.model(), AdmitOnly({DType::f32}), {}),
      StartsWith(p) && Contains("seq_len 2000000000") && Contains("refused before allocating"));

  const Checkpoint ck = Checkpoint::open(model_path("rand-gqa.bin"));
  for (const llama::KvDType kv : {llama::KvDType::f32, llama::KvDType::f16}) {
    const auto option = kv == llama::KvDType::f16 ? KvCacheOption::f16 : KvCacheOption::f32;
    const llama::Admission a =
        llama::admit(ck.model(), AdmitOnly({DType::f32}), {.kv_cache = option});
    CHECK(a.kv.dtype == kv);
    CHECK(a.run_state_bytes == llama::run_state_bytes(ck.config(), kv));
  }
}

TEST_CASE("admit refuses sequences x context that does not fit, and sizes by the context",
          "[robustness][memory][sequences]") {
  using llama::DType;
  // dim 2, one head, 10 layers, seq_len 1,000,000: 160 MB of f32 KV cache per sequence.
  const std::string p = sparse_checkpoint("admit-sequences.bin", {2, 1, 10, 1, 1, 512, 1000000});
  const Checkpoint ck = Checkpoint::open(p);
  const llama::BackendOptions f32{.kv_cache = llama::KvCacheOption::f32};
  const llama::Admission one = llama::admit(ck.model(), AdmitOnly({DType::f32}), f32);
  CHECK(one.sequences == 1);
  CHECK(one.config.seq_len == 1000000);
  // 4096 of them: 655 GB.
  CHECK_THROWS_WITH(llama::admit(ck.model(), AdmitOnly({DType::f32}, 4096), f32),
                    StartsWith(p) &&
                        Contains("sequences 4096, 2, n_layers 10, seq_len 1000000, kv_dim 2") &&
                        Contains("refused before allocating"));
  // The same count with 1000 positions each fits, and the run state is sized by it.
  llama::BackendOptions short_context = f32;
  short_context.context = 1000;
  const llama::Admission many =
      llama::admit(ck.model(), AdmitOnly({DType::f32}, 4096), short_context);
  CHECK(many.sequences == 4096);
  CHECK(many.config.seq_len == 1000);
  CHECK(many.run_state_bytes == llama::run_state_bytes(many.config, llama::KvDType::f32, 4096));
  CHECK(llama::kv_cache_bytes(many.config, llama::KvDType::f32, 4096) ==
        int64_t{4096} * 2 * 10 * 1000 * 2 * 4);
  // A context past the model's, and a negative one, are refused by name.
  llama::BackendOptions too_long = f32;
  too_long.context = 1000001;
  CHECK_THROWS_WITH(llama::admit(ck.model(), AdmitOnly({DType::f32}), too_long),
                    Contains("a context of 1000001 positions per sequence is outside [1, the "
                             "model's seq_len 1000000]"));
  too_long.context = -1;
  CHECK_THROWS_WITH(llama::admit(ck.model(), AdmitOnly({DType::f32}), too_long),
                    Contains("a context of -1 positions"));
}

TEST_CASE("llama-cli refuses an absurd header with one line", "[robustness][memory][bad-input]") {
  const std::string p = sparse_checkpoint("cli-absurd.bin", kAbsurdSeqLen);
  for (const char* backend : {"blas", "reference"}) {
    const ProcessResult r =
        run_llama_cli({"-c", p, "-k", model_path("tokenizer.bin"), "-b", backend, "-s", "4"});
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err,
               StartsWith("llama-cli: " + p) && Contains("KV cache") && Contains("are available"));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}

TEST_CASE("checkpoint errors name the file and the field or offset", "[robustness][bad-input]") {
  const std::vector<int32_t> h = {8, 12, 2, 2, 1, 10, 4};
  const std::string p = temp_path("named.bin");
  const char* fields[] = {"dim",        "hidden_dim", "n_layers", "n_heads",
                          "n_kv_heads", "vocab_size", "seq_len"};
  for (size_t f = 0; f < 7; ++f) {
    auto bad = h;
    bad[f] = 0;
    write_file(p, make_checkpoint_bytes(bad, checkpoint_floats(h)));
    CHECK_THROWS_WITH(Checkpoint::open(p),
                      StartsWith(p) && Contains(std::string("header field ") + fields[f]));
  }
  SECTION("size overflow names the file") {
    write_file(p, make_checkpoint_bytes(
                      {1 << 30, 1 << 30, 1 << 20, 1 << 20, 1 << 20, 32000, 1 << 30}, 16));
    CHECK_THROWS_WITH(Checkpoint::open(p), StartsWith(p) && Contains("overflows"));
  }
  SECTION("truncation names the tensor, its offset and the size the header implies") {
    const int64_t n = checkpoint_floats(h);
    write_file(p, make_checkpoint_bytes(h, 100));  // token_embedding (80) and rms_att (16) fit
    CHECK_THROWS_WITH(Checkpoint::open(p),
                      Contains("tensor wq at offset " + std::to_string(28 + 4 * 96)) &&
                          Contains("file has " + std::to_string(28 + 4 * 100)) &&
                          Contains("implies " + std::to_string(28 + 4 * n) + " bytes"));
  }
  SECTION("other formats are named") {
    auto with_prefix = [&](const std::string& prefix) {
      auto bytes = make_checkpoint_bytes(h, 64);
      std::memcpy(bytes.data(), prefix.data(), prefix.size());
      write_file(p, bytes);
    };
    with_prefix("GGUF");
    CHECK_THROWS_WITH(Checkpoint::open(p), StartsWith(p) && Contains("GGUF"));
    with_prefix("PK\x03\x04");
    CHECK_THROWS_WITH(Checkpoint::open(p), Contains("zip archive"));
    static constexpr char kSafetensors[] = "\x10\0\0\0\0\0\0\0{\"a\":1}";
    with_prefix(std::string(kSafetensors, sizeof kSafetensors - 1));
    CHECK_THROWS_WITH(Checkpoint::open(p), Contains("safetensors"));
  }
}

TEST_CASE("tokenizer errors name the file and the byte offset", "[robustness][bad-input]") {
  std::vector<std::byte> bytes;
  append(bytes, int32_t{4});
  for (const std::string s : {"a", "b", "cdefgh"}) {
    append(bytes, 0.0f);
    append(bytes, static_cast<int32_t>(s.size()));
    for (char ch : s) bytes.push_back(static_cast<std::byte>(ch));
  }
  // Entry 2 starts after max_token_length (4) and entries 0 and 1 (4 + 4 + 1 each).
  CHECK_THROWS_WITH(llama::Llama2cTokenizer::parse(bytes, "tok.bin", 3),
                    StartsWith("tok.bin: entry 2 (at byte 22) has length 6"));
  const llama::Llama2cTokenizer tiny(model_path("tokenizer.bin"), 3);
  CHECK_THROWS_WITH(tiny.encode("x", true, false),
                    StartsWith(model_path("tokenizer.bin") + ": cannot encode"));
}

TEST_CASE("a copied tokenizer outlives its original", "[robustness][tokenizer]") {
  // The lookup index holds views into the vocabulary; a copy must not share them.
  auto original = std::make_unique<llama::Llama2cTokenizer>(model_path("tokenizer.bin"), 32000);
  const llama::Llama2cTokenizer copy = *original;
  llama::Llama2cTokenizer assigned(model_path("tokenizer.bin"), 512);
  assigned = *original;
  original.reset();
  CHECK(copy.encode("hello world", true, false) == std::vector<int32_t>{1, 22172, 3186});
  CHECK(assigned.lookup(" hello") == 22172);
}
