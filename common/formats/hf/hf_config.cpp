// parse_hf_config / apply_generation_config: config.json's fields with
// transformers' LlamaConfig / MistralConfig defaults, each checked for its type
// and range; refusals name the field and the value as written.
#include "llama/formats/hf_config.hpp"

#include <cmath>
#include <limits>
#include <sstream>

#include "../json/strict_json.hpp"
#include "llama/error.hpp"

namespace llama {
namespace {

using nlohmann::json;
constexpr int64_t kMaxInt32 = std::numeric_limits<int32_t>::max();

// Typed access to one JSON object's fields; every error names `source` and the field.
class Fields {
 public:
  Fields(const json& object, std::string source, std::string prefix = "")
      : j_(object), source_(std::move(source)), prefix_(std::move(prefix)) {}

  // The field's value, or nullptr when it is absent or null.
  const json* find(const std::string& name) const {
    const auto it = j_.find(name);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  bool has(const std::string& name) const { return j_.contains(name); }

  [[noreturn]] void fail(const std::string& name, const std::string& why) const {
    const json* v = find(name);
    throw Error(source_ + ": \"" + prefix_ + name + "\"" + (v ? " is " + json_excerpt(*v) : "") +
                ": " + why);
  }

  int64_t integer(const json& v, const std::string& name, int64_t lo, int64_t hi) const {
    if (!v.is_number_integer()) fail(name, "must be an integer");
    const bool in_range = v.is_number_unsigned() ? v.get<uint64_t>() <= static_cast<uint64_t>(hi) &&
                                                       v.get<int64_t>() >= lo
                                                 : v.get<int64_t>() >= lo && v.get<int64_t>() <= hi;
    if (!in_range) {
      fail(name, "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    return v.get<int64_t>();
  }
  int64_t required_int(const std::string& name, int64_t lo = 1, int64_t hi = kMaxInt32) const {
    const json* v = find(name);
    if (v == nullptr)
      throw Error(source_ + ": required field \"" + prefix_ + name + "\" is missing");
    return integer(*v, name, lo, hi);
  }
  // Absent (or null): `fallback`, and the name goes to `defaulted`.
  int64_t optional_int(const std::string& name, int64_t fallback,
                       std::vector<std::string>* defaulted, int64_t lo = 1,
                       int64_t hi = kMaxInt32) const {
    const json* v = find(name);
    if (v == nullptr) {
      if (defaulted) defaulted->push_back(prefix_ + name);
      return fallback;
    }
    return integer(*v, name, lo, hi);
  }
  // A finite number; `positive`: > 0, else >= 0.
  double number(const json& v, const std::string& name, bool positive) const {
    if (!v.is_number()) fail(name, "must be a number");
    const double d = v.get<double>();
    if (!std::isfinite(d) || d < 0 || (positive && d == 0)) {
      fail(name, positive ? "must be a finite number above 0" : "must be a finite number >= 0");
    }
    return d;
  }
  double optional_number(const std::string& name, double fallback,
                         std::vector<std::string>* defaulted, bool positive) const {
    const json* v = find(name);
    if (v == nullptr) {
      if (defaulted) defaulted->push_back(prefix_ + name);
      return fallback;
    }
    return number(*v, name, positive);
  }
  double required_number(const std::string& name) const {
    const json* v = find(name);
    if (v == nullptr)
      throw Error(source_ + ": required field \"" + prefix_ + name + "\" is missing");
    return number(*v, name, true);
  }
  bool optional_bool(const std::string& name, bool fallback,
                     std::vector<std::string>* defaulted) const {
    const json* v = find(name);
    if (v == nullptr) {
      if (defaulted) defaulted->push_back(prefix_ + name);
      return fallback;
    }
    if (!v->is_boolean()) fail(name, "must be true or false");
    return v->get<bool>();
  }
  std::string optional_string(const std::string& name, const std::string& fallback) const {
    const json* v = find(name);
    if (v == nullptr) return fallback;
    if (!v->is_string()) fail(name, "must be a string");
    return v->get<std::string>();
  }
  // An id, or a list of ids (eos_token_id); empty when absent or null.
  std::vector<int64_t> ids(const std::string& name) const {
    const json* v = find(name);
    std::vector<int64_t> out;
    if (v == nullptr) return out;
    if (v->is_array()) {
      if (v->empty()) fail(name, "must be a token id or a non-empty list of them");
      for (const json& e : *v) out.push_back(integer(e, name, 0, kMaxInt32));
    } else {
      out.push_back(integer(*v, name, 0, kMaxInt32));
    }
    return out;
  }

 private:
  const json& j_;
  std::string source_;
  std::string prefix_;
};

json parse_object(std::string_view text, const std::string& source) {
  json j = parse_strict_json(text, source);
  if (!j.is_object()) throw Error(source + ": must be a JSON object, not " + json_kind(j));
  return j;
}

struct Architecture {
  const char* name;
  const char* model_type;
};
constexpr Architecture kLlama{"LlamaForCausalLM", "llama"};
constexpr Architecture kMistral{"MistralForCausalLM", "mistral"};

Architecture architecture(const Fields& f, const std::string& source) {
  const std::string model_type = f.optional_string("model_type", "");
  std::string arch;
  if (const json* a = f.find("architectures")) {
    if (!a->is_array() || a->empty() || !(*a)[0].is_string()) {
      f.fail("architectures", "must be a list of class names");
    }
    if (a->size() > 1) f.fail("architectures", "names more than one architecture");
    arch = (*a)[0].get<std::string>();
  }
  if (arch.empty() && model_type.empty()) {
    throw Error(source + ": has neither \"architectures\" nor \"model_type\"; not a model config?");
  }
  for (const Architecture& known : {kLlama, kMistral}) {
    if (arch == known.name || (arch.empty() && model_type == known.model_type)) {
      if (!model_type.empty() && model_type != known.model_type) {
        f.fail("model_type", std::string("disagrees with architecture ") + known.name +
                                 " (model_type \"" + known.model_type + "\")");
      }
      return known;
    }
  }
  if (!arch.empty()) {
    f.fail("architectures", "only LlamaForCausalLM and MistralForCausalLM are supported");
  }
  f.fail("model_type", "only \"llama\" and \"mistral\" are supported");
}

HfRopeScaling rope_scaling(const Fields& top, const std::string& source) {
  HfRopeScaling out;
  const json* r = top.find("rope_scaling");
  if (r == nullptr) return out;
  if (!r->is_object()) top.fail("rope_scaling", "must be an object or null");
  const Fields f(*r, source, "rope_scaling.");
  const std::string type_key = f.find("rope_type") ? "rope_type" : "type";
  if (f.find(type_key) == nullptr) f.fail("rope_type", "is missing (linear or llama3)");
  const std::string type = f.optional_string(type_key, "");
  if (type == "default") return out;
  if (type == "linear") {
    out.type = HfRopeType::linear;
    out.factor = f.required_number("factor");
    return out;
  }
  if (type == "llama3") {
    out.type = HfRopeType::llama3;
    out.factor = f.required_number("factor");
    out.low_freq_factor = f.required_number("low_freq_factor");
    out.high_freq_factor = f.required_number("high_freq_factor");
    out.original_max_position_embeddings = f.required_int("original_max_position_embeddings");
    if (out.high_freq_factor <= out.low_freq_factor) {
      f.fail("high_freq_factor",
             "must be above low_freq_factor " + json_excerpt(*f.find("low_freq_factor")));
    }
    return out;
  }
  f.fail(type_key, "is not supported (default, linear and llama3 are)");
}

void check_token_ids(const HfConfig& c, const std::string& source) {
  auto check = [&](int64_t id, const char* field) {
    if (id >= c.vocab_size) {
      throw Error(source + ": \"" + field + "\" " + std::to_string(id) +
                  " is outside the vocabulary (vocab_size " + std::to_string(c.vocab_size) + ")");
    }
  };
  if (c.bos_token_id) check(*c.bos_token_id, "bos_token_id");
  for (int64_t id : c.eos_token_ids) check(id, "eos_token_id");
}

}  // namespace

const char* to_string(HfRopeType type) {
  switch (type) {
    case HfRopeType::linear:
      return "linear";
    case HfRopeType::llama3:
      return "llama3";
    default:
      return "none";
  }
}

HfConfig parse_hf_config(std::string_view text, const std::string& source) {
  const json j = parse_object(text, source);
  const Fields f(j, source);
  HfConfig c;
  const Architecture arch = architecture(f, source);
  const bool mistral = arch.name == kMistral.name;
  c.architecture = arch.name;
  c.model_type = arch.model_type;
  auto* defaulted = &c.defaulted;

  c.hidden_size = f.required_int("hidden_size");
  c.intermediate_size = f.required_int("intermediate_size");
  c.num_hidden_layers = f.required_int("num_hidden_layers");
  c.num_attention_heads = f.required_int("num_attention_heads");
  c.vocab_size = f.required_int("vocab_size");
  // MistralConfig's default is 8 kv heads, but an explicit null means all heads.
  const int64_t kv_default = mistral && !f.has("num_key_value_heads") ? 8 : c.num_attention_heads;
  c.num_key_value_heads = f.optional_int("num_key_value_heads", kv_default, defaulted);
  if (c.num_key_value_heads > c.num_attention_heads ||
      c.num_attention_heads % c.num_key_value_heads != 0) {
    f.fail("num_key_value_heads",
           "must divide num_attention_heads " + std::to_string(c.num_attention_heads));
  }
  if (f.find("head_dim") == nullptr && c.hidden_size % c.num_attention_heads != 0) {
    f.fail("hidden_size", "is not divisible by num_attention_heads " +
                              std::to_string(c.num_attention_heads) +
                              " (and there is no head_dim)");
  }
  c.head_dim = f.optional_int("head_dim", c.hidden_size / c.num_attention_heads, defaulted);
  if (c.head_dim % 2 != 0) f.fail("head_dim", "must be even: rotary embedding rotates pairs");
  c.max_position_embeddings =
      f.optional_int("max_position_embeddings", mistral ? 4096 * 32 : 2048, defaulted);
  c.rms_norm_eps = f.optional_number("rms_norm_eps", 1e-6, defaulted, /*positive=*/false);
  c.rope_theta = f.optional_number("rope_theta", 10000.0, defaulted, /*positive=*/true);
  c.rope_scaling = rope_scaling(f, source);
  c.tie_word_embeddings = f.optional_bool("tie_word_embeddings", false, defaulted);
  c.torch_dtype = f.optional_string("torch_dtype", f.optional_string("dtype", ""));

  if (!f.has("bos_token_id")) {
    c.bos_token_id = 1;
    defaulted->push_back("bos_token_id");
  } else if (const auto bos = f.ids("bos_token_id"); !bos.empty()) {
    if (bos.size() > 1) f.fail("bos_token_id", "must be one token id");
    c.bos_token_id = bos[0];
  }
  if (!f.has("eos_token_id")) {
    c.eos_token_ids = {2};
    defaulted->push_back("eos_token_id");
  } else {
    c.eos_token_ids = f.ids("eos_token_id");
  }
  check_token_ids(c, source);

  // What the project's forward pass does not compute.
  const std::string act = f.optional_string("hidden_act", "silu");
  if (act != "silu" && act != "swish") f.fail("hidden_act", "only silu is supported");
  if (f.optional_bool("attention_bias", false, nullptr)) {
    f.fail("attention_bias", "biases in the attention projections are not supported");
  }
  if (f.optional_bool("mlp_bias", false, nullptr)) {
    f.fail("mlp_bias", "biases in the feed-forward projections are not supported");
  }
  if (const json* p = f.find("partial_rotary_factor");
      p && f.number(*p, "partial_rotary_factor", true) != 1.0) {
    f.fail("partial_rotary_factor", "only full-width rotary embedding (1.0) is supported");
  }
  if (f.find("quantization_config") != nullptr) {
    f.fail("quantization_config", "quantized Hugging Face checkpoints are not supported");
  }
  if (mistral) {
    // MistralConfig's default window is 4096; a window at least the context never applies.
    const json* w = f.find("sliding_window");
    const int64_t window =
        w ? f.integer(*w, "sliding_window", 1, std::numeric_limits<int64_t>::max())
          : (f.has("sliding_window") ? c.max_position_embeddings : 4096);
    if (window < c.max_position_embeddings) {
      if (w == nullptr) {
        throw Error(source +
                    ": \"sliding_window\" is absent, so MistralConfig's default 4096 applies, "
                    "below max_position_embeddings " +
                    std::to_string(c.max_position_embeddings) +
                    ": sliding-window attention is not supported");
      }
      f.fail("sliding_window", "below max_position_embeddings " +
                                   std::to_string(c.max_position_embeddings) +
                                   ": sliding-window attention is not supported");
    }
  }
  return c;
}

void apply_generation_config(HfConfig& c, std::string_view text, const std::string& source) {
  const json j = parse_object(text, source);
  const Fields f(j, source);
  bool any = false;
  if (const auto bos = f.ids("bos_token_id"); !bos.empty()) {
    if (bos.size() > 1) f.fail("bos_token_id", "must be one token id");
    c.bos_token_id = bos[0];
    any = true;
  }
  if (const auto eos = f.ids("eos_token_id"); !eos.empty()) {
    c.eos_token_ids = eos;
    any = true;
  }
  check_token_ids(c, source);
  if (any) c.special_ids_source = "generation_config.json";
}

std::string describe(const HfConfig& c) {
  std::ostringstream s;
  s << c.architecture << ": hidden " << c.hidden_size << ", intermediate " << c.intermediate_size
    << ", " << c.num_hidden_layers << " layers, " << c.num_attention_heads << " heads x head_dim "
    << c.head_dim << " (q " << c.q_dim() << "), " << c.num_key_value_heads << " kv heads, vocab "
    << c.vocab_size << ", context " << c.max_position_embeddings << ", rms_norm_eps "
    << c.rms_norm_eps << ", rope_theta " << c.rope_theta << ", rope_scaling "
    << to_string(c.rope_scaling.type);
  if (c.rope_scaling.type == HfRopeType::linear) s << " (factor " << c.rope_scaling.factor << ")";
  if (c.rope_scaling.type == HfRopeType::llama3) {
    s << " (factor " << c.rope_scaling.factor << ", low_freq_factor "
      << c.rope_scaling.low_freq_factor << ", high_freq_factor " << c.rope_scaling.high_freq_factor
      << ", original_max_position_embeddings " << c.rope_scaling.original_max_position_embeddings
      << ")";
  }
  s << ", " << (c.tie_word_embeddings ? "tied" : "untied") << " embeddings, bos ";
  if (c.bos_token_id)
    s << *c.bos_token_id;
  else
    s << "none";
  s << ", eos [";
  for (size_t i = 0; i < c.eos_token_ids.size(); ++i) s << (i ? ", " : "") << c.eos_token_ids[i];
  s << "] (" << c.special_ids_source << ")";
  return s.str();
}

}  // namespace llama
