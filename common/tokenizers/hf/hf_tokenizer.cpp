// load_hf_tokenizer: tokenizer.json (json_reader + components) and
// tokenizer_config.json's special-token settings into one BpeTokenizer.
#include "llama/tokenizers/hf_tokenizer.hpp"

#include <nlohmann/json.hpp>

#include "components.hpp"
#include "json_reader.hpp"
#include "llama/error.hpp"
#include "llama/mapped_file.hpp"

namespace llama {
namespace {

using nlohmann::json;

constexpr int kMaxConfigDepth = 64;  // tokenizer_config.json is flat: a few levels

// nlohmann's message without its "[json.exception.type_error.302] " prefix.
std::string json_message(const json::exception& e) {
  const std::string what = e.what();
  const size_t at = what.find("] ");
  return at == std::string::npos ? what : what.substr(at + 2);
}

// Runs `read`, turning a library exception that got through the type checks
// into one line naming `file` (the checks name the key; this is the net).
template <typename F>
auto json_guard(const std::string& file, F&& read) {
  try {
    return read();
  } catch (const json::exception& e) {
    throw Error(file + ": unexpected JSON: " + json_message(e));
  }
}

// tokenizer_config.json, nesting bounded; a malformed file names the last key read.
json parse_config(std::string_view text, const std::string& file) {
  std::string key;
  auto watch = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth > kMaxConfigDepth) {
      throw Error(file + ": nested deeper than " + std::to_string(kMaxConfigDepth));
    }
    if (event == json::parse_event_t::key && parsed.is_string()) key = parsed.get<std::string>();
    return true;
  };
  try {
    return json::parse(text, watch);
  } catch (const json::exception& e) {
    throw Error(file + ": malformed JSON" + (key.empty() ? "" : " after key \"" + key + "\"") +
                ": " + json_message(e));
  }
}

// The id of a special token named by text (the added tokens first, then the vocabulary).
int32_t id_of(const BpeTokenizerSpec& spec, const std::string& content, const std::string& source,
              const char* key) {
  for (const AddedToken& t : spec.added_tokens) {
    if (t.content == content) return t.id;
  }
  for (size_t i = 0; i < spec.model.vocab.size(); ++i) {
    if (spec.model.vocab[i] == content) return static_cast<int32_t>(i);
  }
  throw Error(source + ": " + key + " \"" + content +
              "\" is neither an added token nor in the vocabulary");
}

// tokenizer_config.json gives a token as text, as {"content": text}, or null.
const json* token_text(const json& config, const char* key, const std::string& source) {
  const auto it = config.find(key);
  if (it == config.end() || it->is_null()) return nullptr;
  if (it->is_string()) return &*it;
  if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) {
    return &(*it)["content"];
  }
  throw Error(source + ": " + key + " is neither text nor {\"content\": text}");
}

void apply_config(const json& config, BpeTokenizerSpec& spec, const std::string& source) {
  if (!config.is_object()) throw Error(source + ": is not a JSON object");
  auto id_for = [&](const char* key) -> int32_t {
    const json* text = token_text(config, key, source);
    return text == nullptr ? -1 : id_of(spec, text->get<std::string>(), source, key);
  };
  const int32_t bos = id_for("bos_token");
  const int32_t eos = id_for("eos_token");
  if (bos >= 0) spec.special.bos = bos;
  if (eos >= 0) spec.special.eos = {eos};
  if (const int32_t unk = id_for("unk_token"); unk >= 0) spec.special.unk = unk;
  if (const int32_t pad = id_for("pad_token"); pad >= 0) spec.special.pad = pad;
  // transformers rebuilds the post-processor from these flags when they are set.
  auto flag = [&](const char* key) -> std::optional<bool> {
    const auto it = config.find(key);
    if (it == config.end() || it->is_null()) return std::nullopt;
    if (!it->is_boolean()) throw Error(source + ": " + key + " is not true or false");
    return it->get<bool>();
  };
  const std::optional<bool> add_bos = flag("add_bos_token"), add_eos = flag("add_eos_token");
  if (add_bos || add_eos) {
    if (add_bos.value_or(false) && bos < 0)
      throw Error(source + ": add_bos_token without bos_token");
    if (add_eos.value_or(false) && eos < 0)
      throw Error(source + ": add_eos_token without eos_token");
    spec.prefix_ids.clear();
    spec.suffix_ids.clear();
    if (add_bos.value_or(false)) spec.prefix_ids.push_back(bos);
    if (add_eos.value_or(false)) spec.suffix_ids.push_back(eos);
  }
}

std::string describe(const BpeTokenizerSpec& spec) {
  for (const PreTokenizerStep& s : spec.pre_tokenizer) {
    if (s.kind == PreTokenizerStep::Kind::byte_level) return "tokenizer.json BPE, byte-level";
  }
  return spec.model.byte_fallback ? "tokenizer.json BPE, SentencePiece-style with byte fallback"
                                  : "tokenizer.json BPE";
}

// Everything after the JSON text itself (which may be unmapped by now).
std::unique_ptr<BpeTokenizer> build(hf::TokenizerJson doc, std::string_view config_json,
                                    const std::string& source, const std::string& config_source) {
  if (!doc.rest.contains("model")) throw Error(source + ": has no \"model\"");
  if (!doc.has_vocab) throw Error(source + ": model has no vocab");
  BpeTokenizerSpec spec;
  spec.source = source;
  spec.model = std::move(doc.model);
  json_guard(source, [&] { hf::read_components(doc.rest, spec); });
  doc.rest = nullptr;
  spec.description = describe(spec);
  // Without tokenizer_config.json: BOS is the post-processor's first special token.
  if (!spec.prefix_ids.empty()) spec.special.bos = spec.prefix_ids.front();
  spec.special.unk = spec.model.unk;
  if (!config_json.empty()) {
    const std::string& cs =
        config_source.empty() ? source + " (tokenizer_config.json)" : config_source;
    const json config = parse_config(config_json, cs);
    json_guard(cs, [&] { apply_config(config, spec, cs); });
  }
  return std::make_unique<BpeTokenizer>(std::move(spec));
}

}  // namespace

std::unique_ptr<BpeTokenizer> parse_hf_tokenizer(std::string_view text,
                                                 std::string_view config_json,
                                                 const std::string& source,
                                                 const std::string& config_source) {
  return build(json_guard(source, [&] { return hf::read_tokenizer_json(text, source); }),
               config_json, source, config_source);
}

std::unique_ptr<BpeTokenizer> load_hf_tokenizer(const std::string& tokenizer_json,
                                                const std::string& tokenizer_config) {
  std::string config_text;
  if (!tokenizer_config.empty()) {
    const MappedFile config(tokenizer_config);
    const auto bytes = config.bytes();
    config_text.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    if (config_text.empty()) throw Error(tokenizer_config + ": is empty");
  }
  hf::TokenizerJson doc = [&] {
    // The mapping (its pages count as resident) ends before the tables are built.
    const MappedFile file(tokenizer_json);
    const auto bytes = file.bytes();
    return json_guard(tokenizer_json, [&] {
      return hf::read_tokenizer_json({reinterpret_cast<const char*>(bytes.data()), bytes.size()},
                                     tokenizer_json);
    });
  }();
  return build(std::move(doc), config_text, tokenizer_json, tokenizer_config);
}

}  // namespace llama
