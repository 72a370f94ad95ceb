// libFuzzer target: Tokenizer::parse on arbitrary tokenizer.bin bytes. The
// first two bytes give the vocabulary size asked for (little-endian), the rest
// is the file. A tokenizer it accepts must look up, decode and encode safely.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "fuzz_check.hpp"
#include "llama/error.hpp"
#include "llama/tokenizers/llama2c_tokenizer.hpp"

namespace {

void exercise(const llama::Llama2cTokenizer& tok, int64_t vocab_size) {
  // 0 asks for every entry of the file.
  FUZZ_CHECK(vocab_size == 0 ? tok.vocab_size() > 0 : tok.vocab_size() == vocab_size,
             "vocabulary size differs from the one asked for");
  for (int32_t id = 0; id < tok.vocab_size(); ++id) {
    const std::string_view piece = tok.piece(id);
    FUZZ_CHECK(static_cast<int64_t>(piece.size()) <= tok.max_token_length(), "piece too long");
    const int32_t found = tok.lookup(piece);
    FUZZ_CHECK(found >= 0 && found <= id && tok.piece(found) == piece, "lookup of a piece");
    (void)tok.decode_token(llama::kBosToken, id);
    (void)llama::Llama2cTokenizer::is_printable_piece(tok.decode_token(0, id));
  }
  for (const char* text : {"", "a", " hello world", "\xE2\x96\x81x\xF0\x9F\xA6\x99", "\x80\x80"}) {
    try {
      for (int32_t id : tok.encode(text, true, true)) {
        FUZZ_CHECK(id >= 0 && id < tok.vocab_size(),
                   "encode produced an id outside the vocabulary");
      }
    } catch (const llama::Error& e) {
      FUZZ_CHECK(std::strstr(e.what(), "cannot encode") != nullptr, "unexpected encode error");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const int64_t vocab_size = data[0] | (data[1] << 8);
  const size_t n = size - 2;
  auto bytes = std::make_unique<std::byte[]>(n);  // exact size: ASan sees any overread
  if (n > 0) std::memcpy(bytes.get(), data + 2, n);
  try {
    exercise(llama::Llama2cTokenizer::parse({bytes.get(), n}, "fuzz-tokenizer.bin", vocab_size),
             vocab_size);
  } catch (const llama::Error& e) {
    FUZZ_CHECK(std::strncmp(e.what(), "fuzz-tokenizer.bin: ", 20) == 0,
               "error does not name the file");
  }
  return 0;
}
