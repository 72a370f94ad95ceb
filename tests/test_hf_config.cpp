// config.json and generation_config.json: the shared models' configs,
// transformers' defaults, and every refusal naming the field and value.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "hf_fixtures.hpp"
#include "llama/error.hpp"
#include "llama/formats/hf_config.hpp"
#include "test_support.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using llama::HfConfig;
using llama::HfRopeType;
using nlohmann::json;
using namespace llama::test;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

HfConfig shared_config(const std::string& dir) {
  const std::string path = model_path(dir + "/config.json");
  HfConfig c = llama::parse_hf_config(slurp(path), path);
  const std::string gen = model_path(dir + "/generation_config.json");
  llama::apply_generation_config(c, slurp(gen), gen);
  return c;
}

HfConfig parse(const json& j) { return llama::parse_hf_config(j.dump(), "config.json"); }

// `j` is refused with one line starting "config.json: " and containing `why`.
void require_refused(const json& j, const std::string& why) {
  INFO(j.dump());
  try {
    (void)parse(j);
    FAIL("accepted");
  } catch (const llama::Error& e) {
    CHECK_THAT(e.what(), StartsWith("config.json: ") && Contains(why));
    CHECK(std::string(e.what()).find('\n') == std::string::npos);
  }
}

json with(json j, const std::string& key, const json& value) {
  j[key] = value;
  return j;
}
json without(json j, const std::string& key) {
  j.erase(key);
  return j;
}

}  // namespace

TEST_CASE("config.json of the shared Hugging Face models", "[hf][config]") {
  const HfConfig s = shared_config("hf/stories1M");
  CHECK(s.architecture == "LlamaForCausalLM");
  CHECK(s.hidden_size == 128);
  CHECK(s.intermediate_size == 352);
  CHECK(s.num_hidden_layers == 5);
  CHECK(s.num_attention_heads == 8);
  CHECK(s.num_key_value_heads == 4);
  CHECK(s.head_dim == 16);
  CHECK(s.vocab_size == 2048);
  CHECK(s.max_position_embeddings == 256);
  CHECK(s.tie_word_embeddings);
  CHECK(s.rms_norm_eps == 1e-5);
  CHECK(s.rope_theta == 10000.0);
  CHECK(s.rope_scaling.type == HfRopeType::none);
  CHECK(s.eos_token_ids == std::vector<int64_t>{1, 2});
  CHECK(s.special_ids_source == "generation_config.json");
  CHECK(s.defaulted.empty());

  const HfConfig l3 = shared_config("hf/rand-llama3");
  CHECK(l3.hidden_size == 96);
  CHECK(l3.head_dim == 32);
  CHECK(l3.q_dim() == 128);  // differs from hidden_size
  CHECK(l3.kv_dim() == 32);
  CHECK(l3.rope_theta == 500000.0);
  CHECK(l3.rope_scaling.type == HfRopeType::llama3);
  CHECK(l3.rope_scaling.factor == 8.0);
  CHECK(l3.rope_scaling.low_freq_factor == 1.0);
  CHECK(l3.rope_scaling.high_freq_factor == 4.0);
  CHECK(l3.rope_scaling.original_max_position_embeddings == 64);
  CHECK(l3.bos_token_id == 128000);
  CHECK(l3.eos_token_ids == std::vector<int64_t>{128001, 128009});
  CHECK(l3.torch_dtype == "bfloat16");

  const HfConfig m = shared_config("hf/rand-mistral-f16");
  CHECK(m.architecture == "MistralForCausalLM");
  CHECK(m.model_type == "mistral");
  CHECK_FALSE(m.tie_word_embeddings);
  CHECK(m.eos_token_ids == std::vector<int64_t>{2});
  CHECK_THAT(llama::describe(l3), Contains("4 heads x head_dim 32 (q 128), 1 kv heads") &&
                                      Contains("rope_scaling llama3 (factor 8") &&
                                      Contains("tied embeddings") &&
                                      Contains("eos [128001, 128009] (generation_config.json)"));
}

TEST_CASE("config.json fields left out take transformers' defaults", "[hf][config]") {
  const json minimal = {{"architectures", {"LlamaForCausalLM"}},
                        {"hidden_size", 64},
                        {"intermediate_size", 128},
                        {"num_hidden_layers", 2},
                        {"num_attention_heads", 4},
                        {"vocab_size", 100}};
  const HfConfig c = parse(minimal);
  CHECK(c.model_type == "llama");
  CHECK(c.num_key_value_heads == 4);
  CHECK(c.head_dim == 16);
  CHECK(c.max_position_embeddings == 2048);
  CHECK(c.rms_norm_eps == 1e-6);
  CHECK(c.rope_theta == 10000.0);
  CHECK_FALSE(c.tie_word_embeddings);
  CHECK(c.bos_token_id == 1);
  CHECK(c.eos_token_ids == std::vector<int64_t>{2});
  CHECK(c.defaulted == std::vector<std::string>{"num_key_value_heads", "head_dim",
                                                "max_position_embeddings", "rms_norm_eps",
                                                "rope_theta", "tie_word_embeddings", "bos_token_id",
                                                "eos_token_id"});
  // model_type alone names the architecture; null means the default too.
  CHECK(parse(with(without(minimal, "architectures"), "model_type", "llama")).architecture ==
        "LlamaForCausalLM");
  CHECK(parse(with(minimal, "num_key_value_heads", nullptr)).num_key_value_heads == 4);
  CHECK_FALSE(parse(with(minimal, "bos_token_id", nullptr)).bos_token_id.has_value());
  // MistralConfig: 8 kv heads unless null, a 131072 context, and no window is fine.
  json mistral =
      with(with(minimal, "architectures", {"MistralForCausalLM"}), "num_attention_heads", 16);
  mistral["sliding_window"] = nullptr;
  mistral["head_dim"] = 4;
  CHECK(parse(mistral).num_key_value_heads == 8);
  CHECK(parse(mistral).max_position_embeddings == 131072);
  CHECK(parse(with(mistral, "num_key_value_heads", nullptr)).num_key_value_heads == 16);
  // A window no shorter than the context never applies.
  CHECK_NOTHROW(
      parse(with(with(mistral, "max_position_embeddings", 4096), "sliding_window", 4096)));
  CHECK_NOTHROW(parse(with(without(mistral, "sliding_window"), "max_position_embeddings", 4096)));
  // rope_scaling: legacy "type", "default", linear.
  CHECK(parse(with(minimal, "rope_scaling", {{"type", "linear"}, {"factor", 2.0}}))
            .rope_scaling.factor == 2.0);
  CHECK(parse(with(minimal, "rope_scaling", {{"rope_type", "default"}})).rope_scaling.type ==
        HfRopeType::none);
  // eos as one id or a list; generation_config overrides both ids.
  HfConfig g = parse(with(minimal, "eos_token_id", {5, 6}));
  CHECK(g.eos_token_ids == std::vector<int64_t>{5, 6});
  llama::apply_generation_config(g, R"({"eos_token_id": 7, "bos_token_id": 3, "do_sample": true})",
                                 "generation_config.json");
  CHECK(g.eos_token_ids == std::vector<int64_t>{7});
  CHECK(g.bos_token_id == 3);
  llama::apply_generation_config(g, R"({"eos_token_id": null})", "generation_config.json");
  CHECK(g.eos_token_ids == std::vector<int64_t>{7});
  CHECK_THROWS_WITH(
      llama::apply_generation_config(g, R"({"eos_token_id": [200]})", "generation_config.json"),
      StartsWith("generation_config.json: \"eos_token_id\" 200 is outside the vocabulary"));
  CHECK_THROWS_WITH(llama::apply_generation_config(g, "[]", "generation_config.json"),
                    StartsWith("generation_config.json: must be a JSON object, not an array"));
}

TEST_CASE("config.json refusals name the field and its value", "[hf][config][robustness]") {
  const json c = tiny_hf_config();
  REQUIRE_NOTHROW(parse(c));
  require_refused(
      with(c, "attention_bias", true),
      "\"attention_bias\" is true: biases in the attention projections are not supported");
  require_refused(with(c, "mlp_bias", true), "\"mlp_bias\" is true: biases in the feed-forward");
  require_refused(with(c, "hidden_act", "gelu"),
                  "\"hidden_act\" is \"gelu\": only silu is supported");
  require_refused(with(c, "architectures", {"Qwen2ForCausalLM"}),
                  "\"architectures\" is [\"Qwen2ForCausalLM\"]: only LlamaForCausalLM and "
                  "MistralForCausalLM are supported");
  require_refused(with(c, "model_type", "mistral"),
                  "\"model_type\" is \"mistral\": disagrees with architecture LlamaForCausalLM");
  require_refused(with(without(c, "architectures"), "model_type", "gpt2"),
                  "\"model_type\" is \"gpt2\": only \"llama\" and \"mistral\" are supported");
  require_refused(without(without(c, "architectures"), "model_type"),
                  "has neither \"architectures\" nor \"model_type\"");
  for (const char* field : {"hidden_size", "intermediate_size", "num_hidden_layers",
                            "num_attention_heads", "vocab_size"}) {
    require_refused(without(c, field), std::string("required field \"") + field + "\" is missing");
    require_refused(with(c, field, nullptr),
                    std::string("required field \"") + field + "\" is missing");
  }
  require_refused(with(c, "num_attention_heads", 3),
                  "\"hidden_size\" is 8: is not divisible by num_attention_heads 3");
  require_refused(with(c, "num_key_value_heads", 3),
                  "\"num_key_value_heads\" is 3: must divide num_attention_heads 2");
  require_refused(with(c, "head_dim", 3), "\"head_dim\" is 3: must be even");
  require_refused(with(c, "num_hidden_layers", 2.0),
                  "\"num_hidden_layers\" is 2.0: must be an integer");
  require_refused(with(c, "num_hidden_layers", "2"),
                  "\"num_hidden_layers\" is \"2\": must be an integer");
  require_refused(with(c, "hidden_size", 0), "\"hidden_size\" is 0: must be in [1, 2147483647]");
  require_refused(with(c, "vocab_size", 4294967296), "\"vocab_size\" is 4294967296: must be in");
  require_refused(with(c, "rms_norm_eps", -1),
                  "\"rms_norm_eps\" is -1: must be a finite number >= 0");
  require_refused(with(c, "rope_theta", 0), "\"rope_theta\" is 0: must be a finite number above 0");
  require_refused(with(c, "tie_word_embeddings", 1),
                  "\"tie_word_embeddings\" is 1: must be true or false");
  require_refused(
      with(c, "rope_scaling", {{"rope_type", "yarn"}, {"factor", 4.0}}),
      "\"rope_scaling.rope_type\" is \"yarn\": is not supported (default, linear and llama3 are)");
  require_refused(with(c, "rope_scaling",
                       {{"rope_type", "llama3"},
                        {"factor", 8.0},
                        {"high_freq_factor", 4.0},
                        {"original_max_position_embeddings", 8192}}),
                  "required field \"rope_scaling.low_freq_factor\" is missing");
  require_refused(with(c, "rope_scaling", {{"rope_type", "linear"}}),
                  "required field \"rope_scaling.factor\" is missing");
  require_refused(with(c, "rope_scaling", {{"factor", 2.0}}),
                  "\"rope_scaling.rope_type\": is missing");
  require_refused(with(c, "rope_scaling", 2), "\"rope_scaling\" is 2: must be an object or null");
  require_refused(with(c, "partial_rotary_factor", 0.5), "\"partial_rotary_factor\" is 0.5");
  require_refused(with(c, "quantization_config", {{"quant_method", "gptq"}}),
                  "\"quantization_config\" is {\"quant_method\":\"gptq\"}: quantized Hugging Face");
  require_refused(with(c, "bos_token_id", 10),
                  "\"bos_token_id\" 10 is outside the vocabulary (vocab_size 10)");
  require_refused(with(c, "eos_token_id", json::array()),
                  "\"eos_token_id\" is []: must be a token id or a non-empty list");
  require_refused(with(c, "eos_token_id", {1, -1}),
                  "\"eos_token_id\" is [1,-1]: must be in [0, 2147483647]");
  json mistral = with(c, "architectures", {"MistralForCausalLM"});
  mistral["model_type"] = "mistral";
  mistral["max_position_embeddings"] = 32768;
  require_refused(
      with(mistral, "sliding_window", 4096),
      "\"sliding_window\" is 4096: below max_position_embeddings 32768: sliding-window attention");
  require_refused(mistral, "\"sliding_window\" is absent, so MistralConfig's default 4096 applies");
  // Not JSON, not an object, a key twice, nesting without end.
  CHECK_THROWS_WITH(llama::parse_hf_config("{\"hidden_size\": 8,", "config.json"),
                    StartsWith("config.json: invalid JSON: parse error at line 1, column 19"));
  CHECK_THROWS_WITH(llama::parse_hf_config("", "config.json"),
                    StartsWith("config.json: invalid JSON"));
  CHECK_THROWS_WITH(llama::parse_hf_config("[]", "config.json"),
                    StartsWith("config.json: must be a JSON object, not an array"));
  CHECK_THROWS_WITH(
      llama::parse_hf_config(R"({"hidden_size": 8, "hidden_size": 16})", "config.json"),
      StartsWith("config.json: invalid JSON: duplicate key \"hidden_size\""));
  CHECK_THROWS_WITH(llama::parse_hf_config(std::string(100000, '['), "config.json"),
                    StartsWith("config.json: invalid JSON: nested deeper than 64 levels"));
}
