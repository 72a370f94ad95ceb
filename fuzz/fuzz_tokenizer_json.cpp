// libFuzzer target: parse_hf_tokenizer on arbitrary tokenizer.json text (the
// part after the first NUL byte, if any, is tokenizer_config.json). A
// tokenizer it accepts must encode, decode and stream a few texts safely.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "llama/error.hpp"
#include "llama/tokenizers/hf_tokenizer.hpp"

namespace {

void exercise(const llama::BpeTokenizer& tok) {
  for (const char* text :
       {"", "a", " hello world", "<s>x</s>", "ab\xF0\x9F\xA6\x99\x80", "\n\n 1234"}) {
    std::vector<int32_t> ids;
    try {
      ids = tok.encode(text);
    } catch (const llama::Error& e) {
      FUZZ_CHECK(std::strncmp(e.what(), "fuzz.json: ", 11) == 0,
                 "encode error does not name the file");
      continue;
    }
    for (int32_t id : ids)
      FUZZ_CHECK(id >= 0 && id < tok.vocab_size(), "id outside the vocabulary");
    const std::string whole = tok.decode(ids, true);
    const auto stream = tok.stream();
    std::string streamed;
    for (int32_t id : ids) streamed += stream->push(id);
    streamed += stream->finish();
    FUZZ_CHECK(streamed == whole, "the stream differs from decode");
    for (int32_t id : ids) (void)tok.decode_token(-1, id);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const size_t nul = all.find('\0');
  const std::string json(all.substr(0, nul));  // exact-size copies: ASan sees overreads
  const std::string config(nul == std::string_view::npos ? "" : all.substr(nul + 1));
  try {
    exercise(*llama::parse_hf_tokenizer(json, config, "fuzz.json", "fuzz-config.json"));
  } catch (const llama::Error& e) {
    FUZZ_CHECK(std::strncmp(e.what(), "fuzz.json", 9) == 0 ||
                   std::strncmp(e.what(), "fuzz-config.json: ", 18) == 0,
               "error does not name the file");
  }
  return 0;
}
