// The numerics policy end to end (llama/numerics.hpp): on a bf16 model, fast
// leaves decode exact's bit for bit and moves prefill's logits by no more than
// bf16 rounding of the activations allows; --numerics in the apps (a bad value
// is one line and exit 2), llama-compare's fast-vs-exact report, --explain's
// kernel per product kind.
#include <catch2/catch.hpp>
#include <iostream>
#include <sstream>

#include "compare_run.hpp"
#include "llama/formats/hf_model.hpp"
#include "llama/kernels/products/half_products.hpp"
#include "llama/registry.hpp"
#include "logit_diff.hpp"
#include "test_support.hpp"

using namespace llama;
using Catch::Contains;

namespace {

std::unique_ptr<InferenceBackend> make(const std::string& name, Numerics n) {
  BackendOptions o;
  o.threads = 2;
  o.numerics = n;
  return BackendRegistry::instance().create(name, o);
}

bool fast_path_here() {
  const bool has =
      half_path_is_fast(half_batch_path(BlockKind::bf16, best_kernel_set(), Numerics::fast));
  if (!has) {
    WARN((half_path_available(HalfPath::onednn_bf16)
              ? "LLAMA_BF16_UNIT=off or the probe: fast runs as exact, only that is checked"
              : "this CPU lacks AVX512-BF16: fast runs as exact here, only that is checked"));
  }
  return has;
}

}  // namespace

TEST_CASE("fast numerics: decode as exact's, prefill within bf16 rounding", "[numerics]") {
  const HfModel m = open_hf_model(test::model_path("hf/stories1M-bf16"));
  const Model& model = m.model;
  std::vector<int32_t> tokens;
  for (int32_t i = 0; i < 40; ++i) tokens.push_back(1 + (i * 37) % 2000);
  // on: the bf16 path where the CPU runs it, whatever the probe says of its
  // speed; off: fast runs the exact kernels.
  for (const char* unit : {"on", "off"}) {
    const test::ScopedEnv env("LLAMA_BF16_UNIT", unit);
    const bool fast_here = fast_path_here();
    for (const char* name : {"blas", "graph"}) {
      INFO(name << ", LLAMA_BF16_UNIT=" << unit);
      auto exact = make(name, Numerics::exact);
      auto fast = make(name, Numerics::fast);
      exact->prepare(model);
      fast->prepare(model);
      for (int64_t pos = 0; pos < 6; ++pos) {
        const std::span<const float> ea = exact->forward(tokens[size_t(pos)], pos);
        const std::vector<float> a(ea.begin(), ea.end());
        const std::span<const float> b = fast->forward(tokens[size_t(pos)], pos);
        CHECK(std::equal(a.begin(), a.end(), b.begin(), b.end()));  // decode stays exact
      }
      const std::span<const float> ew = exact->forward_batch(tokens, 0, true);
      const std::vector<float> want(ew.begin(), ew.end());
      const std::span<const float> got = fast->forward_batch(tokens, 0, true);
      REQUIRE(got.size() == want.size());
      const auto vocab = size_t(model.config.vocab_size);
      double worst = 0;
      for (size_t at = 0; at < got.size(); at += vocab) {
        const auto d = compare::diff_logits(got.subspan(at, vocab),
                                            std::span<const float>(want).subspan(at, vocab));
        worst = std::max(worst, d.max_rel);
      }
      std::cout << name << ": fast vs exact prefill, worst relative logit difference " << worst
                << "\n";
      CHECK(worst < 2e-2);  // bf16 activations: 2^-9 per term, through 8 layers
      if (fast_here) {
        CHECK(worst > 0);  // the bf16 units ran
      } else {
        CHECK(worst == 0);
      }
    }
  }
}

TEST_CASE("the apps' numerics flag: a bad value is one line and exit 2", "[numerics][cli]") {
  const auto r = test::run_llama_cli(
      {"-c", test::model_path("hf/stories1M-bf16"), "-p", "Hi", "--numerics", "quick"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("--numerics: unknown numerics policy 'quick' (exact or fast)"));
  std::ostringstream out, err;
  CHECK(compare::run_compare({"-c", test::model_path("hf/stories1M-bf16"), "-b", "graph,graph",
                              "--numerics", "exact,fast,fast"},
                             out, err) == 2);
  CHECK_THAT(err.str(), Contains("--numerics: 3 policies for 2 backends"));
}

TEST_CASE("llama-compare reports fast against exact, and explain names the kernels",
          "[numerics][cli]") {
  std::ostringstream out, err;
  const int code = compare::run_compare(
      {"-c", test::model_path("hf/stories1M-bf16"), "-b", "graph,graph", "--numerics", "exact,fast",
       "-p", "Once upon a time", "-s", "24", "-t", "0"},
      out, err);
  INFO(out.str() << err.str());
  CHECK((code == 0 || code == 1));
  CHECK_THAT(out.str(), Contains("graph (exact numerics)") && Contains("graph (fast numerics)"));
  for (const char* unit : {"on", "off"}) {
    const test::ScopedEnv env("LLAMA_BF16_UNIT", unit);  // for the llama-cli processes too
    const bool fast_here = fast_path_here();
    // Without the fast path, the batch path exact would take (avx512 or
    // portable, by the CPU and LLAMA_CPU_LEVEL).
    const std::string exact_prefill =
        std::string("prefill ") +
        to_string(half_batch_path(BlockKind::bf16, best_kernel_set(), Numerics::fast)) +
        " (fast numerics";
    // The fast path's own words: the hand-written tiles, or oneDNN.
    const std::string fast_name = half_path_available(HalfPath::amx_bf16)
                                      ? "amx-bf16 (hand-written AMX-BF16 tiles"
                                      : "onednn-bf16 (oneDNN";
    for (const char* b : {"blas", "graph"}) {
      const auto r = test::run_llama_cli({"-c", test::model_path("hf/stories1M-bf16"), "-b", b,
                                          "--numerics", "fast", "--explain"});
      INFO(b << ", LLAMA_BF16_UNIT=" << unit << ": " << r.out << r.err);
      CHECK(r.exit_code == 0);
      CHECK_THAT(r.out,
                 Contains("numerics: fast") && Contains("bf16 read in place x f32: decode") &&
                     Contains(fast_here ? std::string("prefill ") + fast_name : exact_prefill));
    }
  }
}
