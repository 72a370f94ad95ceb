// libFuzzer target: tokenizer.json pipelines built from fuzzed components,
// run on fuzzed text. The input is a JSON object whose normalizer,
// pre_tokenizer, decoder and added_tokens (any of them) go into a fixed model
// that covers every byte (byte-level characters, <0xXX> byte fallback, "▁"),
// then a NUL, then the text. The pipeline is refused with an Error naming the
// file, or the text encodes (or is refused the same way) within the bounds of
// bpe/limits.hpp: ids in range, at most a fixed number of tokens per input
// byte, decode and the stream agree, and no decoded text grows past what the
// decoder limit allows. run_fuzzers.sh gives this target a short timeout: a
// pipeline that runs long despite its budgets is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "../common/tokenizers/bpe/limits.hpp"
#include "fuzz_check.hpp"
#include "llama/error.hpp"
#include "llama/tokenizers/hf_tokenizer.hpp"

namespace {

using nlohmann::json;

// GPT-2's byte-to-character map: the printable Latin-1 bytes stand for
// themselves, the others for U+0100 upwards.
std::string byte_level_char(int b) {
  int n = 0;
  const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174);
  int cp = b;
  if (!printable) {
    for (int i = 0; i < b; ++i) {
      if (!((i >= 33 && i <= 126) || (i >= 161 && i <= 172) || (i >= 174))) ++n;
    }
    cp = 256 + n;
  }
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

// The model every fuzzed pipeline runs with: 256 <0xXX> tokens, the 256
// byte-level characters, "▁" and a few merges; byte fallback on, so any
// normalized text encodes whatever the pre-tokenizer makes of it.
const json& base_doc() {
  static const json doc = [] {
    json vocab = json::object();
    int id = 0;
    char name[8];
    for (int b = 0; b < 256; ++b) {
      std::snprintf(name, sizeof name, "<0x%02X>", b);
      vocab[name] = id++;
    }
    for (int b = 0; b < 256; ++b) {
      const std::string c = byte_level_char(b);
      if (!vocab.contains(c)) vocab[c] = id++;
    }
    for (const char* piece : {"\xE2\x96\x81", "ab", "abc",
                              "\xC4\xA0"
                              "a",
                              "\xE2\x96\x81"
                              "a"}) {
      if (!vocab.contains(piece)) vocab[piece] = id++;
    }
    return json{{"model",
                 {{"type", "BPE"},
                  {"byte_fallback", true},
                  {"vocab", vocab},
                  {"merges", json::array({"a b", "ab c", "\xC4\xA0 a", "\xE2\x96\x81 a"})}}}};
  }();
  return doc;
}

bool names_file(const llama::Error& e) { return std::strncmp(e.what(), "fuzz.json: ", 11) == 0; }

void exercise(const llama::BpeTokenizer& tok, std::string_view text) {
  std::vector<int32_t> ids;
  try {
    ids = tok.encode(text);
  } catch (const llama::Error& e) {
    FUZZ_CHECK(names_file(e), "encode error does not name the file");
    return;
  }
  // Normalized text <= 16 bytes per input byte + 4096; byte-level mapping and
  // prefix spaces at most double it and add one per word; a token takes >= 1 byte.
  const uint64_t most = 4 * llama::bpe::scaled_limit(text.size(), llama::bpe::kNormalizedPerByte,
                                                     llama::bpe::kNormalizedSlack) +
                        64;
  FUZZ_CHECK(ids.size() <= most, "more tokens than the normalizer bound allows");
  uint64_t piece_bytes = 0;
  for (int32_t id : ids) {
    FUZZ_CHECK(id >= 0 && id < tok.vocab_size(), "id outside the vocabulary");
    piece_bytes += tok.piece(id).size();
  }
  std::string whole;
  try {
    whole = tok.decode(ids, true);
  } catch (const llama::Error& e) {
    FUZZ_CHECK(names_file(e), "decode error does not name the file");
    return;
  }
  // Each piece grows at most 16x + 64 in the decoder; invalid UTF-8 triples as U+FFFD.
  FUZZ_CHECK(whole.size() <= 3 * (16 * piece_bytes + 64 * ids.size()) + 3,
             "decoded text larger than the decoder bound allows");
  const auto stream = tok.stream();
  std::string streamed;
  for (int32_t id : ids) streamed += stream->push(id);
  streamed += stream->finish();
  FUZZ_CHECK(streamed == whole, "the stream differs from decode");
  for (int32_t id : ids) {
    try {
      (void)tok.decode_token(-1, id);  // one piece alone: its own (looser) bound
    } catch (const llama::Error& e) {
      FUZZ_CHECK(names_file(e), "decode_token error does not name the file");
    }
  }
}

// Deeper nesting than any pipeline needs; nlohmann's dump() recurses.
bool nested_too_deep(std::string_view s) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > 64) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const size_t nul = all.find('\0');
  const std::string text(nul == std::string_view::npos ? "" : all.substr(nul + 1));
  if (nested_too_deep(all.substr(0, nul))) return 0;
  const json parts = json::parse(all.substr(0, nul), nullptr, /*allow_exceptions=*/false);
  if (!parts.is_object()) return 0;  // the JSON reader has its own target
  json doc = base_doc();
  for (const char* key : {"normalizer", "pre_tokenizer", "decoder", "added_tokens"}) {
    if (parts.contains(key)) doc[key] = parts[key];
  }
  std::unique_ptr<llama::BpeTokenizer> tok;
  try {
    tok = llama::parse_hf_tokenizer(doc.dump(), "", "fuzz.json");
  } catch (const llama::Error& e) {
    FUZZ_CHECK(names_file(e), "error does not name the file");
    return 0;
  }
  exercise(*tok, text);
  return 0;
}
