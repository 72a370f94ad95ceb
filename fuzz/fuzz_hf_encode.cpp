// libFuzzer target: encoding arbitrary bytes with the three shared
// tokenizer.json files (Llama 2, Mistral, Llama 3; read once from
// LLAMA_MODELS_DIR/hf). Ids stay in the vocabulary, the stream gives decode's
// text, and valid UTF-8 text decodes back to itself (byte-level always;
// SentencePiece-style when the text has no "▁" of its own and no added token).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "../common/tokenizers/bpe/utf8.hpp"
#include "fuzz_check.hpp"
#include "llama/error.hpp"
#include "llama/tokenizers/tokenizer.hpp"

namespace {

struct Shared {
  std::unique_ptr<llama::Tokenizer> tok;
  bool byte_level;
};

const std::vector<Shared>& tokenizers() {
  static const std::vector<Shared> all = [] {
    std::vector<Shared> out;
    try {
      for (const char* name : {"llama2-tokenizer", "mistral-tokenizer", "llama3-tokenizer"}) {
        out.push_back({llama::open_tokenizer(std::string(LLAMA_MODELS_DIR "/hf/") + name),
                       std::string_view(name) == "llama3-tokenizer"});
      }
    } catch (const llama::Error& e) {
      std::fprintf(stderr, "fuzz_hf_encode: %s\n", e.what());
      std::exit(1);
    }
    return out;
  }();
  return all;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const bool valid = llama::bpe::is_valid_utf8(text);
  for (const Shared& s : tokenizers()) {
    const llama::Tokenizer& tok = *s.tok;
    // Every byte sequence encodes: byte-level maps bytes, the others fall back to byte tokens.
    const std::vector<int32_t> ids = tok.encode(text, {.add_special = false});
    for (int32_t id : ids)
      FUZZ_CHECK(id >= 0 && id < tok.vocab_size(), "id outside the vocabulary");
    const std::string decoded = tok.decode(ids);
    const auto stream = tok.stream();
    std::string streamed;
    for (int32_t id : ids) streamed += stream->push(id);
    streamed += stream->finish();
    FUZZ_CHECK(streamed == tok.decode(ids, true), "the stream differs from decode");
    const bool plain =
        text.find("\xE2\x96\x81") == std::string::npos && text.find('<') == std::string::npos;
    if (valid && (s.byte_level || plain))
      FUZZ_CHECK(decoded == text, "decode(encode(text)) != text");
    const std::vector<int32_t> with =
        tok.encode(text, {.add_special = true, .parse_special = false});
    FUZZ_CHECK(with.size() >= ids.size() || text.find('<') != std::string::npos,
               "specials lost ids");
  }
  return 0;
}
