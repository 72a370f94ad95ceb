// Batch invariance (docs/backends.md, "Many sequences"): on every backend that claims
// it, a sequence's logits are bit-identical whatever shares a forward_runs call and
// however its tokens are split into runs. Randomized schedules (sequences at
// different positions, chunks of 1 to 150 tokens, rotating orders, logits all, last
// or none, rewinds that run the same tokens again) against each sequence alone as one
// run on a fresh backend, for every weight dtype the backends run and both KV cache
// dtypes. A backend that does not claim it for a model is held to 1e-4 (1e-3 with an
// f16 KV cache).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "llama/formats/gguf_model.hpp"
#include "llama/formats/hf_model.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/kernels/dispatch/half_path.hpp"
#include "llama/registry.hpp"
#include "test_support.hpp"

using namespace llama;

namespace {

using Tokens = std::vector<int32_t>;
constexpr int32_t kSequences = 5;
constexpr int64_t kContext = 256;

// A model file of each weight dtype the backends run, kept open for the test.
struct OpenedModel {
  std::string name;
  std::unique_ptr<Checkpoint> llama2c;
  std::unique_ptr<gguf::GgufModel> gguf;
  std::unique_ptr<HfModel> hf;
  const Model& model() const { return llama2c ? llama2c->model() : gguf ? gguf->model : hf->model; }
};

OpenedModel open(const std::string& file) {
  OpenedModel m{file, nullptr, nullptr, nullptr};
  const std::string path = test::model_path(file);
  if (file.ends_with(".bin")) {
    m.llama2c = std::make_unique<Checkpoint>(Checkpoint::open(path));
  } else if (file.ends_with(".gguf")) {
    m.gguf = std::make_unique<gguf::GgufModel>(gguf::open_model(path));
  } else {
    m.hf = std::make_unique<HfModel>(open_hf_model(path));
  }
  return m;
}

// What each backend claims under exact numerics: the reference always; graph and
// blas unless bf16 products would take amx-bf16x3 (not shown invariant).
bool expected_claim(const std::string& backend, const Model& m) {
  if (backend == "reference") return true;
  return !(m.weights.dtypes().contains(DType::bf16) &&
           half_batch_path(BlockKind::bf16, best_kernel_set(), Numerics::exact) ==
               HalfPath::amx_bf16x3);
}

std::unique_ptr<InferenceBackend> make(const std::string& spec, KvCacheOption kv, int64_t context) {
  BackendOptions o;
  o.threads = 2;
  o.sequences = kSequences;
  o.context = context;
  o.kv_cache = kv;
  return BackendRegistry::instance().create(spec, o);
}

// (sequence, position) -> its row of logits.
using Rows = std::map<std::pair<int32_t, int64_t>, std::vector<float>>;

// Runs `runs` and files every row of logits it returns under its sequence and position.
void run_and_file(InferenceBackend& b, const std::vector<SequenceRun>& runs, int64_t vocab,
                  Rows& rows) {
  const std::span<const float> out = b.forward_runs(runs);
  REQUIRE(int64_t(out.size()) == logit_rows(runs) * vocab);
  size_t at = 0;
  for (const SequenceRun& r : runs) {
    for (size_t i = 0; i < r.tokens.size(); ++i) {
      const bool wanted =
          r.logits == RunLogits::all || (r.logits == RunLogits::last && i + 1 == r.tokens.size());
      if (!wanted) continue;
      rows[{r.sequence, r.start_pos + int64_t(i)}].assign(out.begin() + at * vocab,
                                                          out.begin() + (at + 1) * vocab);
      ++at;
    }
  }
}

// A random schedule of the sequences' tokens: each call takes a random subset of the
// unfinished sequences in random order, each a chunk of random length (mostly short,
// sometimes up to 150) and a random logits choice; now and then a sequence goes back
// to an earlier position and runs the same tokens again.
Rows random_schedule(InferenceBackend& b, const std::vector<Tokens>& seqs, int64_t vocab,
                     std::mt19937& rng) {
  Rows rows;
  std::vector<int64_t> done(seqs.size(), 0);
  const auto unfinished = [&] {
    std::vector<int32_t> s;
    for (size_t i = 0; i < seqs.size(); ++i)
      if (done[i] < int64_t(seqs[i].size())) s.push_back(int32_t(i));
    return s;
  };
  for (std::vector<int32_t> open = unfinished(); !open.empty(); open = unfinished()) {
    std::shuffle(open.begin(), open.end(), rng);
    const size_t take = std::uniform_int_distribution<size_t>(1, open.size())(rng);
    std::vector<SequenceRun> runs;
    for (size_t k = 0; k < take; ++k) {
      const int32_t s = open[k];
      int64_t start = done[size_t(s)];
      if (start > 2 && rng() % 8 == 0)  // a rewind over tokens already run
        start = std::uniform_int_distribution<int64_t>(0, start - 1)(rng);
      const int64_t left = int64_t(seqs[size_t(s)].size()) - start;
      const int64_t most = rng() % 6 == 0 ? 150 : 24;
      const int64_t n = std::uniform_int_distribution<int64_t>(1, std::min(left, most))(rng);
      const RunLogits logits = RunLogits(rng() % 3);
      runs.push_back(
          {s, start, std::span(seqs[size_t(s)]).subspan(size_t(start), size_t(n)), logits});
      done[size_t(s)] = start + n;
    }
    run_and_file(b, runs, vocab, rows);
  }
  return rows;
}

std::vector<Tokens> random_sequences(int64_t vocab, int64_t context, std::mt19937& rng) {
  std::vector<Tokens> seqs;
  for (int32_t s = 0; s < kSequences; ++s) {
    // Lengths past 128 rows (graph's chunk) and past 16 queries (attention's
    // blocks); all together past 512 (blas's chunk).
    const int64_t most = std::min<int64_t>(context, s < 2 ? 256 : 60);
    const int64_t least = std::min<int64_t>(context, s < 2 ? 230 : 20);
    const int64_t n = std::uniform_int_distribution<int64_t>(least, most)(rng);
    Tokens t(static_cast<size_t>(n));
    for (int32_t& id : t) id = std::uniform_int_distribution<int32_t>(0, int32_t(vocab - 1))(rng);
    seqs.push_back(std::move(t));
  }
  return seqs;
}

void check_model(const std::string& spec, const OpenedModel& file, KvCacheOption kv) {
  const Model& m = file.model();
  const int64_t vocab = m.config.vocab_size;
  const int64_t context = std::min(kContext, m.config.seq_len);
  auto b = make(spec, kv, context);
  b->prepare(m);
  const bool claims = b->batch_invariant();
  INFO(spec << " on " << file.name << ", KV cache " << to_string(kv) << ", claims "
            << (claims ? "batch invariance" : "nothing"));
  CHECK(claims == expected_claim(spec, m));
  std::mt19937 rng(0x35u + uint32_t(vocab));
  const std::vector<Tokens> seqs = random_sequences(vocab, context, rng);
  const Rows mixed = random_schedule(*b, seqs, vocab, rng);
  // Every sequence whole in one call on a fresh backend: more tokens than a
  // backend's chunk, so runs are split across chunks.
  auto all = make(spec, kv, context);
  all->prepare(m);
  std::vector<SequenceRun> whole;
  for (int32_t s = 0; s < kSequences; ++s) whole.push_back({s, 0, seqs[size_t(s)], RunLogits::all});
  const std::span<const float> together_span = all->forward_runs(whole);
  const std::vector<float> together(together_span.begin(), together_span.end());
  size_t first_row = 0;  // sequence s's first row in `together`
  for (int32_t s = 0; s < kSequences; ++s) {
    // Alone on a fresh backend, as one run, under another sequence id.
    auto one = make(spec, kv, context);
    one->prepare(m);
    const int32_t id = (s + 2) % kSequences;
    const SequenceRun run{id, 0, seqs[size_t(s)], RunLogits::all};
    const std::span<const float> want = one->forward_runs(std::span(&run, 1));
    {
      INFO("sequence " << s << " in one call with every other, whole");
      const std::span<const float> got =
          std::span(together).subspan(first_row * size_t(vocab), want.size());
      if (claims) {
        REQUIRE(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)) == 0);
      } else {
        REQUIRE(test::relative_diff(got, want) <= (kv == KvCacheOption::f16 ? 4e-3 : 1e-4));
      }
      first_row += seqs[size_t(s)].size();
    }
    for (const auto& [key, got] : mixed) {
      if (key.first != s) continue;
      INFO("sequence " << s << " position " << key.second);
      const std::span<const float> row = want.subspan(size_t(key.second * vocab), size_t(vocab));
      if (claims) {
        REQUIRE(std::memcmp(got.data(), row.data(), size_t(vocab) * sizeof(float)) == 0);
      } else {
        // An f16 cache rounds keys and values to 11 bits: a last-bit change in a
        // product can move a stored value by 2^-11 of itself, and such moves
        // add up over a few hundred positions.
        REQUIRE(test::relative_diff(got, row) <= (kv == KvCacheOption::f16 ? 4e-3 : 1e-4));
      }
    }
  }
}

const char* const kModels[] = {
    "stories260K.bin",          // f32 (llama2.c)
    "q-gqa.v2.bin",             // llama2.c's int8 (q8_0 groups), grouped-query heads
    "hf/stories1M-bf16",        // bf16 (safetensors)
    "hf/rand-mistral-f16",      // f16 (safetensors, two shards)
    "gguf/stories1M.f32.gguf",  // GGUF F32
    "gguf/stories1M.f16.gguf",  // GGUF F16
    "gguf/stories1M.q8_0.gguf",
    "gguf/stories1M.q4_0.gguf",
    "gguf/stories1M.q5_0.gguf",
    "gguf/stories1M.q4_1.gguf",
    "gguf/stories1M.q5_1.gguf",
    "gguf/rand-k.q4_k_m.gguf",  // Q4_K and Q6_K
    "gguf/rand-k.q6_k.gguf",
    "gguf/rand-k.q2_k.gguf",  // Q2_K and Q3_K
};

void check_backend(const std::string& spec) {
  for (const char* file : kModels) {
    const OpenedModel m = open(file);
    for (KvCacheOption kv : {KvCacheOption::f32, KvCacheOption::f16}) check_model(spec, m, kv);
  }
}

}  // namespace

TEST_CASE("reference: batch-invariant for every dtype and KV cache dtype", "[invariance]") {
  check_backend("reference");
}

TEST_CASE("blas: batch-invariant for every dtype and KV cache dtype", "[invariance]") {
  check_backend("blas");
}

TEST_CASE("graph: batch-invariant for every dtype and KV cache dtype", "[invariance]") {
  check_backend("graph");
}
