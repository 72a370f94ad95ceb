// read_components: each tokenizer.json component type this project supports,
// and a one-line refusal for the others.
#include "components.hpp"

#include <algorithm>

#include "llama/error.hpp"

namespace llama::hf {
namespace {

using nlohmann::json;

class Fields {
 public:
  Fields(const json& j, std::string where, const std::string& source)
      : j_(j), where_(std::move(where)), source_(source) {
    if (!j.is_object()) fail("is not an object");
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw Error(source_ + ": " + where_ + " " + why);
  }
  const json* get(const char* key) const {
    const auto it = j_.find(key);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  std::string str(const char* key) const {
    const json* v = get(key);
    if (v == nullptr || !v->is_string()) fail(std::string("needs a string \"") + key + "\"");
    return v->get<std::string>();
  }
  bool flag(const char* key, bool fallback) const {
    const json* v = get(key);
    if (v == nullptr) return fallback;
    if (!v->is_boolean()) fail(std::string("\"") + key + "\" is not true or false");
    return v->get<bool>();
  }
  int64_t integer(const char* key) const {
    const json* v = get(key);
    if (v == nullptr || !v->is_number_integer())
      fail(std::string("needs an integer \"") + key + "\"");
    return v->get<int64_t>();
  }
  const json& array(const char* key) const {
    const json* v = get(key);
    if (v == nullptr || !v->is_array()) fail(std::string("needs an array \"") + key + "\"");
    return *v;
  }
  std::string type() const { return str("type"); }
  const std::string& where() const { return where_; }
  const std::string& source() const { return source_; }

 private:
  const json& j_;
  std::string where_;
  const std::string& source_;
};

// {"String": s} or {"Regex": r} as a PCRE2 pattern (a literal is quoted).
std::string pattern_of(const Fields& f, bool regex_allowed, bool& is_regex) {
  const json* p = f.get("pattern");
  if (p == nullptr || !p->is_object() || p->size() != 1)
    f.fail("needs a pattern {\"String\"|\"Regex\": ...}");
  const auto it = p->begin();
  if (!it->is_string()) f.fail("pattern is not text");
  is_regex = it.key() == "Regex";
  if (it.key() != "String" && !is_regex)
    f.fail("pattern kind " + it.key() + " is not String or Regex");
  if (is_regex && !regex_allowed) f.fail("with a Regex pattern is not supported (only String)");
  return it->get<std::string>();
}

std::string quote_regex(const std::string& literal) {
  std::string out;
  for (char c : literal) {
    if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

void normalizer(const json& j, const std::string& where, BpeTokenizerSpec& spec) {
  const Fields f(j, where, spec.source);
  const std::string type = f.type();
  if (type == "Sequence") {
    const json& list = f.array("normalizers");
    for (size_t i = 0; i < list.size(); ++i) {
      normalizer(list[i], where + ".normalizers[" + std::to_string(i) + "]", spec);
    }
  } else if (type == "Prepend") {
    spec.normalizer.push_back({NormalizerStep::Kind::prepend, "", f.str("prepend")});
  } else if (type == "Replace") {
    bool is_regex = false;
    std::string pattern = pattern_of(f, false, is_regex);
    spec.normalizer.push_back(
        {NormalizerStep::Kind::replace, std::move(pattern), f.str("content")});
  } else {
    f.fail("type " + type + " is not supported (supported: Sequence, Prepend, Replace)");
  }
}

void pre_tokenizer(const json& j, const std::string& where, BpeTokenizerSpec& spec) {
  const Fields f(j, where, spec.source);
  const std::string type = f.type();
  if (type == "Sequence") {
    const json& list = f.array("pretokenizers");
    for (size_t i = 0; i < list.size(); ++i) {
      pre_tokenizer(list[i], where + ".pretokenizers[" + std::to_string(i) + "]", spec);
    }
  } else if (type == "Split") {
    bool is_regex = false;
    std::string pattern = pattern_of(f, true, is_regex);
    if (!is_regex) pattern = quote_regex(pattern);
    const std::string behavior = f.str("behavior");
    if (behavior != "Isolated")
      f.fail("behavior " + behavior + " is not supported (only Isolated)");
    if (f.flag("invert", false)) f.fail("with invert true is not supported");
    spec.pre_tokenizer.push_back({PreTokenizerStep::Kind::split, std::move(pattern), false, false});
  } else if (type == "ByteLevel") {
    spec.pre_tokenizer.push_back({PreTokenizerStep::Kind::byte_level, "",
                                  f.flag("add_prefix_space", true), f.flag("use_regex", true)});
  } else {
    f.fail("type " + type + " is not supported (supported: Sequence, Split, ByteLevel)");
  }
}

void decoder(const json& j, const std::string& where, BpeTokenizerSpec& spec) {
  const Fields f(j, where, spec.source);
  const std::string type = f.type();
  using K = DecoderStep::Kind;
  if (type == "Sequence") {
    const json& list = f.array("decoders");
    for (size_t i = 0; i < list.size(); ++i) {
      decoder(list[i], where + ".decoders[" + std::to_string(i) + "]", spec);
    }
  } else if (type == "Replace") {
    bool is_regex = false;
    std::string pattern = pattern_of(f, false, is_regex);
    spec.decoder.push_back({K::replace, std::move(pattern), f.str("content"), 0, 0});
  } else if (type == "ByteFallback") {
    spec.decoder.push_back({K::byte_fallback, "", "", 0, 0});
  } else if (type == "Fuse") {
    spec.decoder.push_back({K::fuse, "", "", 0, 0});
  } else if (type == "Strip") {
    const int64_t start = f.integer("start"), stop = f.integer("stop");
    if (start < 0 || stop < 0 || start > 1024 || stop > 1024)
      f.fail("start/stop outside [0, 1024]");
    spec.decoder.push_back(
        {K::strip, "", f.str("content"), static_cast<int32_t>(start), static_cast<int32_t>(stop)});
  } else if (type == "ByteLevel") {
    spec.decoder.push_back({K::byte_level, "", "", 0, 0});
  } else {
    f.fail(
        "type " + type +
        " is not supported (supported: Sequence, Replace, ByteFallback, Fuse, Strip, ByteLevel)");
  }
}

// The ids a TemplateProcessing special token name stands for.
std::vector<int32_t> special_ids(const Fields& f, const std::string& name) {
  const json* map = f.get("special_tokens");
  if (map == nullptr || !map->is_object() || !map->contains(name)) {
    f.fail("names special token \"" + name + "\" without listing it in special_tokens");
  }
  const Fields entry((*map)[name], f.where() + ".special_tokens[\"" + name + "\"]", f.source());
  std::vector<int32_t> ids;
  for (const json& id : entry.array("ids")) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX) {
      entry.fail("has an id that is not a non-negative integer");
    }
    ids.push_back(static_cast<int32_t>(id.get<int64_t>()));
  }
  return ids;
}

void post_processor(const json& j, const std::string& where, BpeTokenizerSpec& spec) {
  const Fields f(j, where, spec.source);
  const std::string type = f.type();
  if (type == "Sequence") {
    const json& list = f.array("processors");
    for (size_t i = 0; i < list.size(); ++i) {
      post_processor(list[i], where + ".processors[" + std::to_string(i) + "]", spec);
    }
  } else if (type == "ByteLevel") {
    // Offsets only: the ids are unchanged.
  } else if (type == "TemplateProcessing") {
    if (!spec.prefix_ids.empty() || !spec.suffix_ids.empty()) f.fail("appears twice");
    bool seen_a = false;
    for (const json& item : f.array("single")) {
      if (!item.is_object() || item.size() != 1)
        f.fail("single: an item is not {SpecialToken|Sequence}");
      const auto it = item.begin();
      const Fields body(*it, where + ".single", spec.source);
      if (it.key() == "Sequence") {
        if (body.str("id") != "A" || seen_a) f.fail("single: needs the sequence A once");
        seen_a = true;
      } else if (it.key() == "SpecialToken") {
        const std::vector<int32_t> ids = special_ids(f, body.str("id"));
        auto& to = seen_a ? spec.suffix_ids : spec.prefix_ids;
        to.insert(to.end(), ids.begin(), ids.end());
      } else {
        f.fail("single: item " + it.key() + " is not SpecialToken or Sequence");
      }
    }
    if (!seen_a) f.fail("single: has no sequence A");
  } else {
    f.fail("type " + type +
           " is not supported (supported: TemplateProcessing, ByteLevel, Sequence)");
  }
}

void model_options(const json& doc, BpeTokenizerSpec& spec) {
  const json* m = doc.contains("model") ? &doc["model"] : nullptr;
  if (m == nullptr || m->is_null()) throw Error(spec.source + ": has no \"model\"");
  const Fields f(*m, "model", spec.source);
  const json* type = f.get("type");
  // Old files leave out "type" when the model is BPE.
  if (type != nullptr && (!type->is_string() || type->get<std::string>() != "BPE")) {
    const std::string shown = type->is_string() ? type->get<std::string>() : type->dump();
    f.fail("type " + (shown.size() > 64 ? shown.substr(0, 64) + "..." : shown) +
           " is not supported (only BPE)");
  }
  const json* dropout = f.get("dropout");
  if (dropout != nullptr && !(dropout->is_number() && dropout->get<double>() == 0.0)) {
    f.fail("dropout is not supported (encoding would not be deterministic)");
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    const json* v = f.get(key);
    if (v != nullptr && !(v->is_string() && v->get<std::string>().empty())) {
      f.fail(std::string(key) + " is not supported");
    }
  }
  spec.model.fuse_unk = f.flag("fuse_unk", false);
  spec.model.byte_fallback = f.flag("byte_fallback", false);
  spec.model.ignore_merges = f.flag("ignore_merges", false);
  if (f.get("unk_token") != nullptr) {
    const std::string unk = f.str("unk_token");
    const auto& vocab = spec.model.vocab;
    const auto it = std::find(vocab.begin(), vocab.end(), unk);
    spec.model.unk = it == vocab.end() ? -1 : static_cast<int32_t>(it - vocab.begin());
    if (spec.model.unk < 0) f.fail("unk_token \"" + unk + "\" is not in the vocabulary");
  }
}

void added_tokens(const json& doc, BpeTokenizerSpec& spec) {
  const json* list = doc.contains("added_tokens") ? &doc["added_tokens"] : nullptr;
  if (list == nullptr || list->is_null()) return;
  if (!list->is_array()) throw Error(spec.source + ": added_tokens is not an array");
  for (size_t i = 0; i < list->size(); ++i) {
    const Fields f((*list)[i], "added_tokens[" + std::to_string(i) + "]", spec.source);
    const int64_t id = f.integer("id");
    if (id < 0 || id >= (int64_t{1} << 24))
      f.fail("has id " + std::to_string(id) + ", out of range");
    AddedToken t;
    t.id = static_cast<int32_t>(id);
    t.content = f.str("content");
    t.special = f.flag("special", false);
    t.normalized = f.flag("normalized", !t.special);
    t.lstrip = f.flag("lstrip", false);
    t.rstrip = f.flag("rstrip", false);
    t.single_word = f.flag("single_word", false);
    spec.added_tokens.push_back(std::move(t));
  }
}

}  // namespace

void read_components(const nlohmann::json& doc, BpeTokenizerSpec& spec) {
  model_options(doc, spec);
  added_tokens(doc, spec);
  auto component = [&](const char* key, auto&& read) {
    const auto it = doc.find(key);
    if (it != doc.end() && !it->is_null()) read(*it, key, spec);
  };
  component("normalizer", normalizer);
  component("pre_tokenizer", pre_tokenizer);
  component("post_processor", post_processor);
  component("decoder", decoder);
}

}  // namespace llama::hf
