// The tokenizer interface the generation loop, the chat code and the apps use,
// whatever the tokenizer's kind (llama2.c tokenizer.bin, Hugging Face
// tokenizer.json, GGUF's embedded vocabulary), and open_tokenizer(), which
// picks the implementation from a path.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace llama {

struct EncodeOptions {
  // The special tokens the tokenizer itself adds: llama2.c's BOS; for
  // tokenizer.json its post-processor, or tokenizer_config.json's
  // add_bos_token / add_eos_token when given.
  bool add_special = true;
  // Added tokens spelled in the text ("<s>", "<|eot_id|>") become those tokens,
  // as Hugging Face's tokenizers do by default. Turn off for untrusted text.
  // llama2.c's tokenizer.bin has no added tokens: no effect there.
  bool parse_special = true;
};

// Ids with a role; -1 when the tokenizer has none.
struct SpecialTokens {
  int32_t bos = -1;
  std::vector<int32_t> eos;  // the tokenizer's own end token(s); a model may list more
  int32_t unk = -1;
  int32_t pad = -1;
};

// Streaming decode for generation output: push ids one at a time and print
// what each call returns. The pieces joined (with finish()) are the text the
// tokenizer's output rule gives for the ids: for tokenizer.json exactly
// decode(ids, skip_special = true); no call returns an incomplete UTF-8
// character, so a byte-level token that ends inside one is held back until the
// character is complete. llama2.c keeps run.c's rule (see Llama2cTokenizer).
class TextStream {
 public:
  virtual ~TextStream() = default;
  // The text that `token` completes (possibly empty).
  virtual std::string push(int32_t token) = 0;
  // What is still held back at the end (an incomplete character becomes U+FFFD).
  virtual std::string finish() = 0;
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // What it is, for messages and --tokenize: "llama2.c tokenizer.bin",
  // "tokenizer.json BPE (byte-level)" ...
  virtual std::string description() const = 0;

  // Throws Error (naming the tokenizer's file and the input's offset) when the
  // vocabulary cannot represent the text.
  virtual std::vector<int32_t> encode(std::string_view text,
                                      const EncodeOptions& options = {}) const = 0;

  // The whole text of `ids`: for tokenizer.json Hugging Face's
  // decode(ids, skip_special_tokens); for llama2.c the decode_token()s joined.
  virtual std::string decode(std::span<const int32_t> ids, bool skip_special = false) const = 0;

  // The bytes `token` adds after `prev` (-1: it is the first): llama2.c drops
  // the leading space after BOS and turns <0xXX> into the byte (run.c);
  // tokenizer.json applies its decoder to the one token (a byte-level token may
  // be part of a UTF-8 character). For display of single tokens; whole texts
  // come from decode() or a stream().
  virtual std::string decode_token(int32_t prev, int32_t token) const = 0;

  // A streaming decoder for generated text (see TextStream).
  virtual std::unique_ptr<TextStream> stream() const = 0;

  virtual int64_t vocab_size() const = 0;
  // The vocabulary's string for `id` (as stored: "▁the", "Ġthe", " the"); throws
  // Error outside [0, vocab_size).
  virtual std::string_view piece(int32_t id) const = 0;
  // The id whose piece is exactly `piece`, or -1.
  virtual int32_t lookup(std::string_view piece) const = 0;
  // A control token (BOS, EOS, tokenizer.json's special added tokens).
  virtual bool is_special(int32_t id) const = 0;

  const SpecialTokens& special() const { return special_; }

 protected:
  SpecialTokens special_;
};

struct TokenizerOpenOptions {
  // llama2.c tokenizer.bin holds no entry count: read the first `vocab_size`
  // entries (a model's), or every entry to the end of the file when 0.
  // tokenizer.json: when non-zero, the vocabulary must not be larger.
  int64_t vocab_size = 0;
};

// Opens a tokenizer by what the path holds: a directory with tokenizer.json
// (and tokenizer_config.json beside it, if present), a tokenizer.json file
// (JSON text), or else a llama2.c tokenizer.bin.
std::unique_ptr<Tokenizer> open_tokenizer(const std::string& path,
                                          const TokenizerOpenOptions& options = {});

}  // namespace llama
