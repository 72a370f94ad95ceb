// libFuzzer target: BPE encoding of arbitrary bytes with the Llama 2
// tokenizer.bin (read once from LLAMA_MODELS_DIR, or $LLAMA_FUZZ_TOKENIZER).
// Every id must be in the vocabulary and the pieces must spell the text back.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "llama/error.hpp"
#include "llama/tokenizers/llama2c_tokenizer.hpp"

namespace {

constexpr int64_t kVocabSize = 32000;

const llama::Llama2cTokenizer& tokenizer() {
  static const llama::Llama2cTokenizer tok = [] {
    const char* env = std::getenv("LLAMA_FUZZ_TOKENIZER");
    const std::string path = env != nullptr ? env : LLAMA_MODELS_DIR "/tokenizer.bin";
    try {
      return llama::Llama2cTokenizer(path, kVocabSize);
    } catch (const llama::Error& e) {
      std::fprintf(stderr, "fuzz_bpe_encode: %s (set LLAMA_FUZZ_TOKENIZER)\n", e.what());
      std::exit(1);
    }
  }();
  return tok;
}

// Byte-fallback tokens <0x00>..<0xFF> are ids 3..258 in the Llama 2 vocabulary.
bool is_byte_token(int32_t id) { return id >= 3 && id < 3 + 256; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const llama::Llama2cTokenizer& tok = tokenizer();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::vector<int32_t> ids = tok.encode(text, true, true);  // the full vocabulary: no throw
  FUZZ_CHECK(ids.size() >= 2 && ids.front() == llama::kBosToken && ids.back() == llama::kEosToken,
             "BOS/EOS missing");
  FUZZ_CHECK(ids.size() <= text.size() + 3, "more tokens than bytes");
  std::string spelled;
  int32_t prev = llama::kBosToken;
  for (size_t i = 1; i + 1 < ids.size(); ++i) {
    const int32_t id = ids[i];
    FUZZ_CHECK(id >= 0 && id < kVocabSize, "id outside the vocabulary");
    spelled +=
        is_byte_token(id) ? std::string(1, static_cast<char>(id - 3)) : std::string(tok.piece(id));
    (void)tok.decode_token(prev, id);
    prev = id;
  }
  // A literal "<0xXX>" in the text may merge into the byte token of that name (as in run.c).
  if (text.find("<0x") == std::string_view::npos) {
    const std::string expected = text.empty() ? "" : " " + std::string(text);
    FUZZ_CHECK(spelled == expected, "the pieces do not spell the text");
  }
  return 0;
}
