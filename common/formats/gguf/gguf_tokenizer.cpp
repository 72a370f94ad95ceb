// tokenizer.ggml.* into a BpeTokenizerSpec, with llama.cpp's defaults
// (llama-vocab.cpp at commit c392e5094): `llama` adds a space prefix and BOS,
// `gpt2` neither unless its pre-tokenizer does; special ids outside the
// vocabulary mean "none", as llama.cpp ignores them.
#include "llama/formats/gguf_tokenizer.hpp"

#include "llama/error.hpp"
#include "llama/tokenizers/bpe_tokenizer.hpp"

namespace llama::gguf {
namespace {

constexpr const char* kSpace = "\xe2\x96\x81";  // U+2581, SentencePiece's space

// llama.cpp's token types.
enum TokenType : int64_t {
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6
};

// The regexes of llama.cpp's pre-tokenizers we support, applied in turn.
std::vector<std::string> pre_regexes(const File& f, std::string_view pre) {
  if (pre == "llama-bpe" || pre == "llama3" || pre == "llama-v3") {
    return {
        "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
        "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"};
  }
  if (pre == "default" || pre.empty()) {
    return {"[\\p{P}\\$\\+<=>\\^~\\|]+",
            "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
            "\\p{N}+", "[0-9][0-9][0-9]"};
  }
  if (pre == "gpt-2" || pre == "phi-2") {
    return {"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"};
  }
  throw Error(f.source() + ": tokenizer.ggml.pre " + quoted(pre) +
              " is not supported (llama-bpe, llama3, llama-v3, default, gpt-2 and phi-2 are)");
}

DecoderStep decoder(DecoderStep::Kind kind, std::string pattern = "", std::string content = "",
                    int32_t start = 0, int32_t stop = 0) {
  DecoderStep d;
  d.kind = kind;
  d.pattern = std::move(pattern);
  d.content = std::move(content);
  d.start = start;
  d.stop = stop;
  return d;
}

NormalizerStep normalizer(NormalizerStep::Kind kind, std::string pattern, std::string content) {
  NormalizerStep n;
  n.kind = kind;
  n.pattern = std::move(pattern);
  n.content = std::move(content);
  return n;
}

PreTokenizerStep pre_step(PreTokenizerStep::Kind kind, std::string regex = "") {
  PreTokenizerStep p;
  p.kind = kind;
  p.regex = std::move(regex);
  return p;
}

int32_t special_id(const File& f, const char* key, int32_t fallback, int64_t n) {
  const auto v = f.optional_uint(key);
  if (!v) return fallback;
  return *v < static_cast<uint64_t>(n) ? static_cast<int32_t>(*v) : -1;
}

}  // namespace

bool has_tokenizer(const File& f) {
  return f.find("tokenizer.ggml.model") != nullptr && f.find("tokenizer.ggml.tokens") != nullptr;
}

std::unique_ptr<Tokenizer> open_tokenizer(const File& f, int64_t vocab_size) {
  const std::string_view model = f.string("tokenizer.ggml.model");
  const Value* tv = f.find("tokenizer.ggml.tokens");
  auto tokens = tv != nullptr ? tv->as_strings() : std::nullopt;
  if (!tokens) {
    throw Error(f.source() + ": metadata key \"tokenizer.ggml.tokens\" is " +
                (tv == nullptr ? std::string("missing") : "not an array of strings"));
  }
  const auto n = static_cast<int64_t>(tokens->size());
  if (vocab_size > 0 && n != vocab_size) {
    throw Error(f.source() + ": the tokenizer has " + std::to_string(n) +
                " tokens (tokenizer.ggml.tokens) but the model's vocabulary has " +
                std::to_string(vocab_size));
  }
  if (n == 0 || n > (int64_t{1} << 31) - 1) {
    throw Error(f.source() + ": tokenizer.ggml.tokens holds " + std::to_string(n) + " tokens");
  }
  std::vector<int64_t> types(static_cast<size_t>(n), kNormal);
  if (const Value* t = f.find("tokenizer.ggml.token_type")) {
    auto v = t->as_ints();
    if (!v || static_cast<int64_t>(v->size()) != n) {
      throw Error(f.source() + ": metadata key \"tokenizer.ggml.token_type\" is not " +
                  std::to_string(n) + " integers, one per token");
    }
    types = std::move(*v);
  }

  BpeTokenizerSpec spec;
  spec.source = f.source();
  spec.model.vocab.assign(tokens->begin(), tokens->end());
  for (int64_t i = 0; i < n; ++i) {
    const int64_t type = types[static_cast<size_t>(i)];
    if (type == kControl || type == kUnknown || type == kUserDefined) {
      AddedToken a;
      a.id = static_cast<int32_t>(i);
      a.content = spec.model.vocab[static_cast<size_t>(i)];
      a.special = type != kUserDefined;
      spec.added_tokens.push_back(std::move(a));
    }
  }
  SpecialTokens& sp = spec.special;
  bool add_bos = false, add_eos = false;
  if (model == "llama") {
    spec.description = "GGUF llama (SentencePiece) vocabulary";
    const Value* s = f.find("tokenizer.ggml.scores");
    auto scores = s != nullptr ? s->as_floats() : std::nullopt;
    if (!scores || static_cast<int64_t>(scores->size()) != n) {
      throw Error(f.source() + ": metadata key \"tokenizer.ggml.scores\" is not " +
                  std::to_string(n) + " floats, one per token");
    }
    spec.model.scores = std::move(*scores);
    spec.model.byte_fallback = true;
    spec.model.fuse_unk = true;
    sp.bos = special_id(f, "tokenizer.ggml.bos_token_id", 1, n);
    sp.eos = {special_id(f, "tokenizer.ggml.eos_token_id", 2, n)};
    sp.unk = special_id(f, "tokenizer.ggml.unknown_token_id", 0, n);
    spec.model.unk = sp.unk;
    add_bos = true;
    if (f.optional_bool("tokenizer.ggml.add_space_prefix").value_or(true)) {
      spec.normalizer.push_back(normalizer(NormalizerStep::Kind::prepend, "", kSpace));
    }
    spec.normalizer.push_back(normalizer(NormalizerStep::Kind::replace, " ", kSpace));
    spec.decoder = {decoder(DecoderStep::Kind::replace, kSpace, " "),
                    decoder(DecoderStep::Kind::byte_fallback), decoder(DecoderStep::Kind::fuse),
                    decoder(DecoderStep::Kind::strip, "", " ", 1, 0)};
  } else if (model == "gpt2") {
    spec.description = "GGUF gpt2 (byte-level BPE) vocabulary";
    const std::string_view pre = f.optional_string("tokenizer.ggml.pre").value_or("");
    for (const std::string& r : pre_regexes(f, pre)) {
      spec.pre_tokenizer.push_back(pre_step(PreTokenizerStep::Kind::split, r));
    }
    spec.pre_tokenizer.push_back(pre_step(PreTokenizerStep::Kind::byte_level));
    const bool llama3 = pre == "llama-bpe" || pre == "llama3" || pre == "llama-v3";
    spec.model.ignore_merges = llama3;
    add_bos = llama3;
    const Value* mv = f.find("tokenizer.ggml.merges");
    auto merges = mv != nullptr ? mv->as_strings() : std::nullopt;
    if (!merges) {
      throw Error(f.source() + ": metadata key \"tokenizer.ggml.merges\" is " +
                  (mv == nullptr ? std::string("missing") : "not an array of strings"));
    }
    const PieceIndex index(spec.model.vocab);
    spec.model.merges.reserve(merges->size());
    for (size_t i = 0; i < merges->size(); ++i) {
      const std::string_view m = (*merges)[i];
      const size_t space = m.find(' ', 1);
      const int32_t a = space == std::string_view::npos ? -1 : index.find(m.substr(0, space));
      const int32_t b = space == std::string_view::npos ? -1 : index.find(m.substr(space + 1));
      if (a < 0 || b < 0) {
        throw Error(f.source() + ": tokenizer.ggml.merges[" + std::to_string(i) + "] " + quoted(m) +
                    " is not two tokens of the vocabulary");
      }
      spec.model.merges.emplace_back(a, b);
    }
    sp.bos = special_id(f, "tokenizer.ggml.bos_token_id", -1, n);
    sp.eos = {special_id(f, "tokenizer.ggml.eos_token_id", -1, n)};
    spec.decoder = {decoder(DecoderStep::Kind::byte_level)};
  } else {
    throw Error(f.source() + ": tokenizer.ggml.model " + quoted(model) +
                " is not supported (llama and gpt2 are)");
  }
  sp.pad = special_id(f, "tokenizer.ggml.padding_token_id", -1, n);
  if (sp.eos.size() == 1 && sp.eos[0] < 0) sp.eos.clear();
  add_bos = f.optional_bool("tokenizer.ggml.add_bos_token").value_or(add_bos);
  add_eos = f.optional_bool("tokenizer.ggml.add_eos_token").value_or(add_eos);
  if (add_bos && sp.bos >= 0) spec.prefix_ids.push_back(sp.bos);
  if (add_eos && !sp.eos.empty()) spec.suffix_ids.push_back(sp.eos[0]);
  return std::make_unique<BpeTokenizer>(std::move(spec));
}

}  // namespace llama::gguf
