// Hugging Face directories as Models: the Config from config.json, the weights
// as views of the mapping, and hf-parity.json's streams, argmaxes and logits
// on every backend (the f32, bf16 and f16 models, GQA, head_dim != dim / heads,
// llama3 rope scaling, tied and untied, two shards).
#include <catch2/catch.hpp>
#include <map>

#include "llama/error.hpp"
#include "llama/formats/hf_model.hpp"
#include "llama/generate.hpp"
#include "llama/kernels/numbers/dequantize.hpp"
#include "llama/registry.hpp"
#include "llama/tokenizers/tokenizer.hpp"
#include "test_support.hpp"

using namespace llama;

namespace {

const HfModel& model_of(const std::string& dir) {
  static std::map<std::string, HfModel> models;
  auto it = models.find(dir);
  if (it == models.end()) it = models.emplace(dir, open_hf_model(test::model_path(dir))).first;
  return it->second;
}

// How far (relative) the coin of a draw (its logits f32 [vocab], after `draws`
// earlier draws) must move for run.c's sampler to pick both `a` and `b`: the
// draw's distance from the boundary between them (1 when no coin within 1e-3
// does).
double tie_distance(std::span<const float> logits, const nlohmann::json& c, int64_t draws,
                    int32_t a, int32_t b) {
  Rng rng(c["seed"].get<uint64_t>());
  float coin = 0;
  for (int64_t i = 0; i <= draws; ++i) coin = rng.next_f32();
  const float temperature = c["temperature"], top_p = c["top_p"];
  std::vector<float> p(logits.begin(), logits.end());
  for (float& v : p) v /= temperature;
  softmax(p);
  Sampler s(static_cast<int64_t>(p.size()), temperature, top_p, 0);
  const auto pick = [&](double k) {
    const auto shifted = static_cast<float>(coin * k);
    return top_p <= 0 || top_p >= 1 ? sample_multinomial(p, shifted) : s.sample_top_p(p, shifted);
  };
  bool got_a = false, got_b = false;
  for (double d = 1e-7; d <= 1e-3; d *= 1.1) {
    for (const double k : {1 - d, 1 + d}) {
      const int32_t t = pick(k);
      got_a = got_a || t == a;
      got_b = got_b || t == b;
    }
    if (got_a && got_b) return d;
  }
  return 1;
}

// How closely every backend's logits follow the reference's where it gives
// them (relative to the largest; hf-parity.json's bar is 1e-4, they reach ~7e-7).
constexpr double kLogitAgreement = 1e-6;

bool inside(std::span<const std::byte> part, std::span<const std::byte> whole) {
  return part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size();
}

}  // namespace

TEST_CASE("an HF directory's config becomes the model's Config", "[hf][model]") {
  const Config& s = model_of("hf/stories1M").model.config;
  CHECK(s.rope_layout == RopeLayout::halves);
  CHECK(s.shared_classifier);
  CHECK(s.bos_id == 1);
  CHECK(s.eos_ids == std::vector<int32_t>{1, 2});  // generation_config.json
  CHECK(s.seq_len == s.context_length);

  const Config& l3 = model_of("hf/rand-llama3").model.config;
  CHECK(l3.dim == 96);
  CHECK(l3.head_dim == 32);
  CHECK(l3.q_dim() == 128);
  CHECK(l3.n_kv_heads == 1);
  CHECK(l3.rope_theta == 500000.0);
  CHECK(l3.rope_scaling.type == RopeScalingType::llama3);
  CHECK(l3.rope_scaling.factor == 8.0);
  CHECK(l3.rope_scaling.original_max_position_embeddings == 64);
  CHECK(l3.eos_ids == std::vector<int32_t>{128001, 128009});
  CHECK(l3.bos_id == 128000);

  const Config& mi = model_of("hf/rand-mistral-f16").model.config;
  CHECK_FALSE(mi.shared_classifier);
  CHECK(mi.n_kv_heads == 2);
}

TEST_CASE("the KV cache is the context capped at 4096 unless asked otherwise", "[hf][model]") {
  HfConfig hf = model_of("hf/stories1M").checkpoint.config();
  hf.max_position_embeddings = 131072;
  const Config capped = hf_model_config(hf, "config.json");
  CHECK(capped.seq_len == kDefaultHfContextCap);
  CHECK(capped.context_length == 131072);
  CHECK(hf_model_config(hf, "config.json", 100).seq_len == 100);
  CHECK(hf_model_config(hf, "config.json", 0).seq_len == 131072);
}

TEST_CASE("f32 HF weights are views of the mapped file", "[hf][model]") {
  const HfModel& m = model_of("hf/stories1M");
  CHECK(m.copied_tensors == 0);
  const auto& file = m.checkpoint.safetensors().files().at(0);
  const std::span<const std::byte> whole = file->tensors().front().bytes;
  const std::byte* begin = whole.data() - (file->tensors().front().offset);
  const std::span<const std::byte> mapped(begin, static_cast<size_t>(file->file_size()));
  size_t n = 0;
  m.model.weights.for_each([&](const Tensor& t) {
    CHECK(t.dtype == DType::f32);
    CHECK(inside(t.data, mapped));
    ++n;
  });
  CHECK(n == m.checkpoint.tensors().size());
  CHECK(m.model.weights.tied());
  CHECK(m.model.weights.layers[0].wq.name == "model.layers.0.self_attn.q_proj.weight");
}

TEST_CASE("bf16 and f16 weights are widened exactly", "[hf][model]") {
  // stories1M-bf16 is stories1M rounded to bf16: widening gives values within
  // bf16's half-ulp of the f32 model's.
  const HfModel& f32 = model_of("hf/stories1M");
  const HfModel& bf16 = model_of("hf/stories1M-bf16");
  CHECK(bf16.checkpoint.tensors().at(1).tensor->dtype == SafetensorsDtype::BF16);
  CHECK(bf16.model.weights.dtypes().to_string() == "bf16");  // read in place
  const auto a = f32.model.weights.layers[1].w2.f32();
  std::vector<float> b(a.size());
  dequantize(bf16.model.weights.layers[1].w2, b);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO(i);
    REQUIRE(std::abs(a[i] - b[i]) <= std::abs(a[i]) * (1.0f / 256.0f));
  }
}

TEST_CASE("hf-parity.json: every stream, argmax and logit on every backend", "[hf][parity]") {
  const nlohmann::json cases = test::load_json(test::reference_path("hf-parity.json"));
  REQUIRE(cases.size() >= 10);
  // The built-in backends, and each through a wrapper (the protocol forwards
  // supported_dtypes and the weights as they are).
  const std::string spec = GENERATE(as<std::string>{}, "reference", "blas", "graph",
                                    "counting:graph", "timing:blas");
  for (const nlohmann::json& c : cases) {
    const std::string name = c["name"];
    INFO(spec << " " << name);
    const HfModel& m = model_of(c["model"]);
    const Config& config = m.model.config;
    const auto tok =
        open_tokenizer(test::model_path(c["model"]), {.vocab_size = config.vocab_size});
    auto backend = test::make_backend(spec);
    backend->prepare(m.model);
    Sampler sampler(config.vocab_size, c["temperature"].get<float>(), c["top_p"].get<float>(),
                    c["seed"].get<uint64_t>());
    GenerationOptions g;
    g.prompt = c["prompt"];
    g.steps = c["steps"];
    g.eos = config.eos_ids;
    g.stop_at_bos = false;
    const GenerationResult r = generate(*backend, config, *tok, sampler, g);
    CHECK(r.prompt_tokens == c["prompt_tokens"].get<std::vector<int32_t>>());
    std::vector<int32_t> stream = r.prompt_tokens;
    stream.insert(stream.end(), r.generated_tokens.begin(), r.generated_tokens.end());
    const auto expected = c["stream"].get<std::vector<int32_t>>();

    auto fresh = test::make_backend(spec);
    fresh->prepare(m.model);
    const std::vector<float> logits = test::sequential_logits(*fresh, expected);
    const auto vocab = static_cast<size_t>(config.vocab_size);
    const auto argmax = c["argmax"].get<std::vector<int32_t>>();
    REQUIRE(argmax.size() == expected.size());
    for (size_t p = 0; p < argmax.size(); ++p) {
      const std::span<const float> row(logits.data() + p * vocab, vocab);
      const auto best = std::max_element(row.begin(), row.end()) - row.begin();
      INFO("position " << p);
      REQUIRE(best == argmax[p]);
    }
    if (stream != expected) {
      // The one allowance: a draw the reference made so near the boundary
      // between two tokens that f32 logits agreeing to kLogitAgreement (as
      // checked below) may fall either side. The streams must agree up to that
      // draw, and it must be such a tie; the logits along the whole reference
      // stream are checked all the same.
      const auto k = static_cast<size_t>(
          std::mismatch(stream.begin(), stream.end(), expected.begin(), expected.end()).first -
          stream.begin());
      const size_t n_prompt = r.prompt_tokens.size();
      REQUIRE(k >= n_prompt);
      REQUIRE(k < std::min(stream.size(), expected.size()));
      const std::span<const float> row(logits.data() + (k - 1) * vocab, vocab);
      const double d =
          tie_distance(row, c, static_cast<int64_t>(k - n_prompt), stream[k], expected[k]);
      // Logits within eps of the reference's scale each exp(l / T) by at most
      // e^(eps / T), so the coin's boundaries move by at most 2 eps / T (relative).
      double scale = 0;
      for (float v : row) scale = std::max(scale, std::abs(static_cast<double>(v)));
      const bool tie = d <= 2 * kLogitAgreement * scale / c["temperature"].get<double>();
      WARN(spec << " " << name << ": position " << k << " drew " << stream[k] << ", the reference "
                << expected[k] << ", coin " << d << " (relative) from the boundary between them"
                << (tie ? ": a tie, the stream compared up to it" : ": NOT a tie"));
      REQUIRE(tie);
    } else {
      CHECK(to_string(r.stop_reason) == c["stop_reason"].get<std::string>());
    }
    double worst = 0;
    for (const auto& [pos, top] : c["top_logits"].items()) {
      const size_t p = std::stoul(pos);
      double scale = 0;
      for (const auto& e : top) scale = std::max(scale, std::abs(e[1].get<double>()));
      for (const auto& e : top) {
        const float got = logits.at(p * vocab + e[0].get<size_t>());
        INFO("position " << p << " id " << e[0]);
        CHECK(std::abs(got - e[1].get<double>()) <= 1e-4 * scale);
        worst = std::max(worst, std::abs(got - e[1].get<double>()) / scale);
      }
    }
    CHECK(worst <= kLogitAgreement);
  }
}

TEST_CASE("open_hf_model refuses what HfCheckpoint refuses, naming the file", "[hf][model]") {
  CHECK_THROWS_WITH(open_hf_model(test::model_path("stories1M.bin")),
                    Catch::Contains("stories1M.bin"));
  CHECK_THROWS_AS(open_hf_model(test::temp_path("absent-dir")), Error);
}
