// Llama2cTokenizer: the reference encodings, decoding, safe printing and bad files.
#include <catch2/catch.hpp>

#include "llama/error.hpp"
#include "llama/tokenizers/llama2c_tokenizer.hpp"
#include "test_support.hpp"

using Catch::Matchers::Contains;
using llama::Llama2cTokenizer;
using namespace llama::test;

namespace {

const Llama2cTokenizer& llama2_tokenizer() {
  static const Llama2cTokenizer tok(model_path("tokenizer.bin"), 32000);
  return tok;
}

// A tokenizer.bin with the given (score, text) entries.
std::vector<std::byte> tokenizer_bytes(int32_t max_len,
                                       const std::vector<std::pair<float, std::string>>& entries) {
  std::vector<std::byte> out;
  append(out, max_len);
  for (const auto& [score, text] : entries) {
    append(out, score);
    append(out, static_cast<int32_t>(text.size()));
    for (char ch : text) out.push_back(static_cast<std::byte>(ch));
  }
  return out;
}

}  // namespace

TEST_CASE("encodes every reference prompt exactly as llama2.c", "[tokenizer]") {
  const auto cases = load_json(reference_path("tokenizer.json"));
  REQUIRE(cases.size() >= 5);
  for (const auto& c : cases) {
    INFO("prompt: " << c["text"].get<std::string>());
    CHECK(llama2_tokenizer().encode(c["text"].get<std::string>(), true, false) ==
          c["tokens"].get<std::vector<int32_t>>());
  }
}

TEST_CASE("encode: BOS/EOS flags, byte fallback and merges", "[tokenizer]") {
  const Llama2cTokenizer& tok = llama2_tokenizer();
  CHECK(tok.encode("", false, false).empty());
  CHECK(tok.encode("", true, true) == std::vector<int32_t>{1, 2});
  // "\xF0\x9F\xA6\x99" (a crab emoji, not in the vocabulary): four byte tokens.
  const auto crab = tok.encode("\xF0\x9F\xA6\x99", false, false);
  CHECK(crab == std::vector<int32_t>{29871, 0xF0 + 3, 0x9F + 3, 0xA6 + 3, 0x99 + 3});
  // A lone continuation byte and invalid UTF-8 still encode, byte by byte.
  CHECK(tok.encode("\x80", false, false) == std::vector<int32_t>{29871, 0x80 + 3});
  CHECK(tok.encode("hello", true, false) == std::vector<int32_t>{1, 22172});
}

TEST_CASE("decode strips the space after BOS and maps raw bytes", "[tokenizer]") {
  const Llama2cTokenizer& tok = llama2_tokenizer();
  CHECK(tok.piece(22172) == " hello");
  CHECK(tok.decode_token(1, 22172) == "hello");
  CHECK(tok.decode_token(5, 22172) == " hello");
  CHECK(tok.decode_token(5, 13) == "\n");                 // <0x0A>
  CHECK(tok.decode_token(5, 3) == std::string(1, '\0'));  // <0x00>
  CHECK_THROWS_AS(tok.decode_token(5, 32000), llama::Error);
  CHECK_THROWS_AS(tok.decode_token(5, -1), llama::Error);
}

TEST_CASE("safe printing drops lone control bytes only", "[tokenizer]") {
  CHECK(Llama2cTokenizer::is_printable_piece("a"));
  CHECK(Llama2cTokenizer::is_printable_piece("\n"));
  CHECK(Llama2cTokenizer::is_printable_piece(" hello"));
  CHECK(Llama2cTokenizer::is_printable_piece("\xE2\x96"));  // multi-byte: printed as is
  CHECK_FALSE(Llama2cTokenizer::is_printable_piece(std::string(1, '\0')));
  CHECK_FALSE(Llama2cTokenizer::is_printable_piece("\x07"));
  CHECK_FALSE(Llama2cTokenizer::is_printable_piece("\x80"));
  CHECK_FALSE(Llama2cTokenizer::is_printable_piece(""));
}

TEST_CASE("a vocabulary without ' ' falls back to byte tokens", "[tokenizer]") {
  const Llama2cTokenizer small(model_path("tokenizer.bin"), 512);
  CHECK(small.lookup(" ") == -1);
  const auto tokens = small.encode("hi", true, false);
  REQUIRE(tokens.front() == 1);
  // The dummy prefix becomes <0x20>; the text merges within the small vocabulary.
  CHECK(tokens[1] == 0x20 + 3);
  for (int32_t t : tokens) CHECK((t >= 0 && t < 512));
  // A vocabulary too small for byte tokens gives a clear error.
  const Llama2cTokenizer tiny(model_path("tokenizer.bin"), 3);
  CHECK_THROWS_WITH(tiny.encode("x", true, false), Contains("cannot encode"));
  CHECK(tiny.encode("", true, false) == std::vector<int32_t>{1});
}

TEST_CASE("tokenizer.bin readers refuse bad files", "[tokenizer][bad-input]") {
  const std::string p = temp_path("tok.bin");
  SECTION("fewer entries than the model's vocabulary") {
    write_file(p, tokenizer_bytes(16, {{0.f, "abcdefghijklmnop"}, {0.f, "bcdefghijklmnopq"}}));
    CHECK_THROWS_WITH(Llama2cTokenizer(p, 3),
                      Contains("tok.bin") && Contains("truncated") && Contains("entry 2"));
  }
  SECTION("impossibly many entries for the file size") {
    write_file(p, tokenizer_bytes(4, {{0.f, "a"}}));
    CHECK_THROWS_WITH(Llama2cTokenizer(p, 32000), Contains("fewer than"));
  }
  SECTION("entry length negative or above max_token_length") {
    write_file(p, tokenizer_bytes(4, {{0.f, "a"}, {0.f, "toolong"}}));
    CHECK_THROWS_WITH(Llama2cTokenizer(p, 2), Contains("entry 1") && Contains("length 7"));
    auto bytes = tokenizer_bytes(4, {{0.f, "a"}});
    const int32_t neg = -5;
    std::memcpy(bytes.data() + 8, &neg, 4);
    write_file(p, bytes);
    CHECK_THROWS_WITH(Llama2cTokenizer(p, 1), Contains("length -5"));
  }
  SECTION("truncated text") {
    auto bytes = tokenizer_bytes(8, {{0.f, "abcd"}});
    bytes.resize(bytes.size() - 2);
    write_file(p, bytes);
    CHECK_THROWS_WITH(Llama2cTokenizer(p, 1), Contains("truncated"));
  }
  SECTION("bad max_token_length and empty file") {
    write_file(p, tokenizer_bytes(-1, {{0.f, "a"}}));
    CHECK_THROWS_WITH(Llama2cTokenizer(p, 1), Contains("max_token_length"));
    write_file(p, {});
    CHECK_THROWS_WITH(Llama2cTokenizer(p, 1), Contains("truncated"));
    CHECK_THROWS_WITH(Llama2cTokenizer(temp_path("nope.bin"), 1), Contains("nope.bin"));
  }
}

TEST_CASE("open_tokenizer reads a whole tokenizer.bin behind the interface", "[tokenizer]") {
  const std::unique_ptr<llama::Tokenizer> tok = llama::open_tokenizer(model_path("tokenizer.bin"));
  CHECK(tok->vocab_size() == 32000);
  CHECK(tok->special().bos == 1);
  CHECK(tok->special().eos == std::vector<int32_t>{2});
  CHECK(tok->encode("hello") == std::vector<int32_t>{1, 22172});
  CHECK(tok->encode("hello", {.add_special = false}) == std::vector<int32_t>{22172});
  CHECK(llama::open_tokenizer(model_path("tokenizer.bin"), {.vocab_size = 512})->vocab_size() ==
        512);
  const std::vector<int32_t> ids = {1, 22172, 3186, 13, 2};
  CHECK(tok->decode(ids) == "\n<s>\nhello world\n\n</s>\n");  // tokenizer.bin's pieces
  CHECK(tok->decode(ids, /*skip_special=*/true) == "hello world\n");
}

TEST_CASE("the llama2.c stream prints as run.c: no BOS, no lone control bytes", "[tokenizer]") {
  const Llama2cTokenizer& tok = llama2_tokenizer();
  const auto stream = tok.stream();
  CHECK(stream->push(1).empty());         // BOS
  CHECK(stream->push(22172) == "hello");  // the space after BOS dropped
  CHECK(stream->push(3186) == " world");
  CHECK(stream->push(3 + 0x07).empty());  // <0x07>: safe_printf drops it
  CHECK(stream->push(3 + 0xE2).empty());  // a lone non-ASCII byte too, as run.c
  CHECK(stream->push(13) == "\n");        // <0x0A>
  CHECK(stream->finish().empty());
}
