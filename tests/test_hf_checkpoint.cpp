// Hugging Face directories: the shared models bound tensor by tensor, and a
// missing, unexpected, mis-shaped or mis-typed tensor refused by name.
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <tuple>

#include "hf_fixtures.hpp"
#include "llama/error.hpp"
#include "llama/formats/hf_checkpoint.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/formats/rotary_rows.hpp"
#include "test_support.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using llama::HfCheckpoint;
using llama::HfRole;
using llama::SafetensorsDtype;
using nlohmann::json;
using namespace llama::test;

namespace {

// Opening `path` fails with one line containing every part of `why`.
void require_refused(const std::string& path, const std::vector<std::string>& why) {
  try {
    (void)HfCheckpoint::open(path);
    FAIL("accepted " << path);
  } catch (const llama::Error& e) {
    const std::string what = e.what();
    for (const std::string& w : why) CHECK_THAT(what, Contains(w));
    CHECK(what.find('\n') == std::string::npos);
  }
}

}  // namespace

TEST_CASE("the shared Hugging Face directories bind every tensor", "[hf][checkpoint]") {
  struct Expect {
    const char* dir;
    SafetensorsDtype dtype;
    size_t tensors;
    size_t files;
  };
  for (const Expect& x : {Expect{"hf/stories1M", SafetensorsDtype::F32, 1 + 5 * 9 + 1, 1},
                          Expect{"hf/stories1M-bf16", SafetensorsDtype::BF16, 1 + 5 * 9 + 1, 1},
                          Expect{"hf/rand-llama3", SafetensorsDtype::BF16, 1 + 2 * 9 + 1, 1},
                          Expect{"hf/rand-mistral-f16", SafetensorsDtype::F16, 1 + 2 * 9 + 2, 2}}) {
    INFO(x.dir);
    const std::string dir = model_path(x.dir);
    const HfCheckpoint ck = HfCheckpoint::open(dir);
    CHECK(ck.tensors().size() == x.tensors);
    CHECK(ck.safetensors().files().size() == x.files);
    for (const auto& t : ck.tensors()) CHECK(t.tensor->dtype == x.dtype);
    CHECK(ck.paths().tokenizer == dir + "/tokenizer.json");
    CHECK(ck.paths().tokenizer_config == dir + "/tokenizer_config.json");
    CHECK(ck.ignored().empty());
  }
  const HfCheckpoint l3 = HfCheckpoint::open(model_path("hf/rand-llama3"));
  CHECK(l3.tensor(HfRole::q_proj, 1).tensor->shape == std::vector<int64_t>{128, 96});
  CHECK(l3.tensor(HfRole::k_proj, 0).tensor->shape == std::vector<int64_t>{32, 96});
  CHECK(l3.tensor(HfRole::o_proj, 0).tensor->shape == std::vector<int64_t>{96, 128});
  CHECK(l3.tensor(HfRole::o_proj, 0).spec.name == "model.layers.0.self_attn.o_proj.weight");
  CHECK_THROWS_WITH(l3.tensor(HfRole::lm_head), Contains("no tensor"));
  CHECK(l3.weight_bytes() ==
        2 * (128256 * 96 + 2 * (128 * 96 + 2 * 32 * 96 + 96 * 128 + 3 * 256 * 96 + 2 * 96) + 96));
  // The weights file itself (or the index) names the same checkpoint.
  CHECK(HfCheckpoint::open(model_path("hf/stories1M/model.safetensors")).tensors().size() == 47);
  CHECK(HfCheckpoint::open(model_path("hf/rand-mistral-f16/model.safetensors.index.json"))
            .tensors()
            .size() == 21);
}

TEST_CASE("a Hugging Face directory is refused naming the file and the tensor",
          "[hf][checkpoint][robustness]") {
  const json config = tiny_hf_config();
  auto tensors = hf_fixture_tensors(config);
  REQUIRE_NOTHROW(HfCheckpoint::open(make_hf_dir("good", config, tensors)));

  auto missing = tensors;
  missing.erase(missing.begin() + 3);  // layer 0's v_proj
  require_refused(
      make_hf_dir("missing", config, missing),
      {"missing/model.safetensors: missing tensor \"model.layers.0.self_attn.v_proj.weight\"",
       "describes 1 layers, untied embeddings"});

  auto shaped = tensors;
  shaped[2].shape = {8, 8};  // k_proj is [kv_heads * head_dim = 4, hidden 8]
  require_refused(make_hf_dir("shape", config, shaped),
                  {"shape/model.safetensors: tensor \"model.layers.0.self_attn.k_proj.weight\" has "
                   "shape [8, 8]",
                   "shape/config.json implies [4, 8]"});

  auto typed = tensors;
  typed[1].dtype = SafetensorsDtype::I8;
  require_refused(
      make_hf_dir("dtype", config, typed),
      {"tensor \"model.layers.0.self_attn.q_proj.weight\" has dtype I8; only F32, BF16 and F16"});

  auto extra = tensors;
  extra.push_back({"model.layers.0.self_attn.q_proj.bias", SafetensorsDtype::F32, {8}});
  require_refused(
      make_hf_dir("extra", config, extra),
      {"unexpected tensor \"model.layers.0.self_attn.q_proj.bias\"", "1 layers, no biases"});
  auto layer = tensors;
  layer.push_back({"model.layers.1.input_layernorm.weight", SafetensorsDtype::F32, {8}});
  require_refused(make_hf_dir("layer", config, layer),
                  {"unexpected tensor \"model.layers.1.input_layernorm.weight\""});

  // Tied: lm_head.weight may be there (ignored, as transformers ties it); inv_freq buffers too.
  json tied = config;
  tied["tie_word_embeddings"] = true;
  auto with_head = tensors;
  with_head.push_back({"model.layers.0.self_attn.rotary_emb.inv_freq", SafetensorsDtype::F32, {2}});
  const HfCheckpoint t = HfCheckpoint::open(make_hf_dir("tied", tied, with_head));
  CHECK(t.ignored() ==
        std::vector<std::string>{"lm_head.weight", "model.layers.0.self_attn.rotary_emb.inv_freq"});
  CHECK(t.tensors().size() == tensors.size() - 1);

  // A shape config.json does not allow (heads that do not divide) is refused before the weights.
  json bad = config;
  bad["num_attention_heads"] = 3;
  require_refused(
      make_hf_dir("heads", bad, tensors),
      {"heads/config.json: \"hidden_size\" is 8: is not divisible by num_attention_heads 3"});
  // generation_config.json is read and checked too.
  const std::string gen = make_hf_dir("gen", config, tensors, json{{"eos_token_id", {2, 3}}});
  CHECK(HfCheckpoint::open(gen).config().eos_token_ids == std::vector<int64_t>{2, 3});
  write_text(gen + "/generation_config.json", "{");
  require_refused(gen, {"gen/generation_config.json: invalid JSON"});
}

// Issue 39: num_hidden_layers 100000000 took GBs and 30 s listing the tensors it implies
// before the first was found missing. The layer count is now checked against the
// tensor table first, so these return at once.
TEST_CASE("config.json sizes are checked against the tensors before anything is sized from them",
          "[hf][checkpoint][robustness]") {
  const auto tensors = hf_fixture_tensors(tiny_hf_config());  // 1 layer: 12 tensors
  for (const int64_t layers : {int64_t{100000000}, int64_t{2147483647}, int64_t{2}}) {
    json config = tiny_hf_config();
    config["num_hidden_layers"] = layers;
    const std::string n = std::to_string(layers);
    require_refused(make_hf_dir("layers" + n, config, tensors),
                    {"layers" + n + "/config.json: \"num_hidden_layers\" is " + n,
                     "model.safetensors holds 12 tensors, room for at most 1 layers"});
  }
  // The other sizes fail at the first tensor whose shape they give.
  for (const char* field : {"vocab_size", "hidden_size", "intermediate_size"}) {
    json config = tiny_hf_config();
    config[field] = 2147483646;
    if (std::string(field) == "hidden_size") config["head_dim"] = 4;
    require_refused(make_hf_dir(field, config, tensors),
                    {std::string(field) + "/config.json implies [", "2147483646"});
  }
  // An index's entries are not bounded by anything read before it: its size is (a 64 MiB
  // one took 900 MB to parse before its first absent shard was named).
  const std::string big_index = temp_path("big-index");
  std::filesystem::create_directories(big_index);
  write_text(big_index + "/config.json", tiny_hf_config().dump());
  write_text(big_index + "/model.safetensors.index.json",
             R"({"weight_map": {"a": "b"}})" + std::string((1 << 20) - 25, ' '));
  require_refused(big_index, {"big-index/model.safetensors.index.json: 1048577 bytes, more than "
                              "the 1048576 such a file may have"});
  // One safetensors file names at most 65536 tensors and 65536 metadata entries (a 100 MB
  // header of empty tensors named 1.7 million: 670 MB parsed).
  for (const bool metadata : {false, true}) {
    std::string header = metadata ? R"({"__metadata__":{)" : "{";
    for (int i = 0; i <= 65536; ++i) {
      header += (i ? "," : "") + ("\"t" + std::to_string(i)) +
                (metadata ? "\":\"\"" : R"(":{"dtype":"F32","shape":[0],"data_offsets":[0,0]})");
    }
    header += metadata ? "}}" : "}";
    CHECK_THROWS_WITH(llama::SafetensorsFile::parse(raw_safetensors(header, 0), "many", nullptr),
                      std::string("many: header: more than 65536 ") +
                          (metadata ? "\"__metadata__\" entries" : "tensors"));
  }
  // config.json likewise: nothing bounds its keys but its size.
  json padded = tiny_hf_config();
  padded["padding"] = std::string(1 << 20, ' ');
  require_refused(make_hf_dir("big-config", padded, tensors),
                  {"big-config/config.json: ", "more than the 1048576 such a file may have"});
  json heads = tiny_hf_config();
  heads["num_attention_heads"] = 1 << 30;
  heads["head_dim"] = 4;
  require_refused(make_hf_dir("heads_huge", heads, tensors),
                  {"q_proj.weight\" has shape [8, 8]", "implies [4294967296, 8]"});
}

TEST_CASE("a path that is not a Hugging Face checkpoint says what it is",
          "[hf][checkpoint][robustness]") {
  const std::string dir = temp_path("not-hf");
  std::filesystem::create_directories(dir);
  require_refused(dir, {"not-hf: no model.safetensors or model.safetensors.index.json"});
  write_text(dir + "/pytorch_model.bin", "x");
  require_refused(dir, {"it holds PyTorch pickle weights (pytorch_model.bin), which are not read"});
  write_file(dir + "/model.safetensors", safetensors_bytes(hf_fixture_tensors(tiny_hf_config())));
  require_refused(dir, {"not-hf/model.safetensors: no config.json beside it"});
  require_refused(dir + "/nothing.safetensors", {"nothing.safetensors: cannot open"});
  require_refused(model_path("stories1M.bin"), {"not a Hugging Face checkpoint"});
  CHECK(llama::looks_like_hf_checkpoint(dir));
  CHECK(llama::looks_like_hf_checkpoint("x/model.safetensors"));
  CHECK_FALSE(llama::looks_like_hf_checkpoint(model_path("stories1M.bin")));
  // A shard the index names but that is not there.
  const std::string sharded = temp_path("sharded");
  std::filesystem::create_directories(sharded);
  write_text(sharded + "/config.json", tiny_hf_config().dump());
  write_text(
      sharded + "/model.safetensors.index.json",
      R"({"weight_map": {"model.embed_tokens.weight": "model-00001-of-00002.safetensors"}})");
  require_refused(
      sharded, {"sharded/model.safetensors.index.json: shard \"model-00001-of-00002.safetensors\"",
                "is absent"});
}

TEST_CASE("the f32 HF stories1M holds stories1M.bin's weights, q/k rows in rotate_half order",
          "[hf][checkpoint]") {
  const HfCheckpoint hf = HfCheckpoint::open(model_path("hf/stories1M"));
  const llama::Checkpoint bin = llama::Checkpoint::open(model_path("stories1M.bin"));
  const llama::Config& c = bin.config();
  const auto same = [](std::span<const std::byte> a, std::span<const std::byte> b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size()) == 0;
  };
  const llama::ModelWeights& w = bin.model().weights;
  CHECK(same(hf.tensor(HfRole::embed_tokens).tensor->bytes, w.token_embedding.data));
  CHECK(same(hf.tensor(HfRole::final_norm).tensor->bytes, w.final_norm.data));
  for (int64_t l = 0; l < c.n_layers; ++l) {
    INFO("layer " << l);
    const llama::LayerWeights& lt = w.layers[static_cast<size_t>(l)];
    CHECK(same(hf.tensor(HfRole::input_norm, l).tensor->bytes, lt.attention_norm.data));
    CHECK(same(hf.tensor(HfRole::post_attn_norm, l).tensor->bytes, lt.ffn_norm.data));
    CHECK(same(hf.tensor(HfRole::v_proj, l).tensor->bytes, lt.wv.data));
    CHECK(same(hf.tensor(HfRole::o_proj, l).tensor->bytes, lt.wo.data));
    CHECK(same(hf.tensor(HfRole::gate_proj, l).tensor->bytes, lt.w1.data));
    CHECK(same(hf.tensor(HfRole::down_proj, l).tensor->bytes, lt.w2.data));
    CHECK(same(hf.tensor(HfRole::up_proj, l).tensor->bytes, lt.w3.data));
    for (const auto& [role, heads, rows] : {std::tuple{HfRole::q_proj, c.n_heads, lt.wq.data},
                                            std::tuple{HfRole::k_proj, c.n_kv_heads, lt.wk.data}}) {
      const auto hf_rows = hf.tensor(role, l).tensor->bytes;
      CHECK_FALSE(same(hf_rows, rows));  // the orders differ...
      std::vector<std::byte> interleaved(hf_rows.size()), back(hf_rows.size());
      llama::rotate_half_to_interleaved(hf_rows, interleaved, heads, c.head_size(), 4 * c.dim);
      CHECK(same(interleaved, rows));  // ...by exactly export.py's permutation
      llama::interleaved_to_rotate_half(interleaved, back, heads, c.head_size(), 4 * c.dim);
      CHECK(std::memcmp(back.data(), hf_rows.data(), back.size()) == 0);
    }
  }
  std::vector<std::byte> small(10);
  CHECK_THROWS_WITH(llama::rotate_half_to_interleaved(hf.tensor(HfRole::k_proj, 0).tensor->bytes,
                                                      small, 4, 16, 512),
                    Contains("expected 32768"));
}
