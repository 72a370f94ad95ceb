// A BPE tokenizer as a pipeline of components, after Hugging Face tokenizers:
// added tokens matched first, then normalizer, pre-tokenizer, BPE model,
// post-processor; decoder steps on the way back. tokenizer.json files become
// one (hf_tokenizer.hpp), and so can any vocabulary held in memory (GGUF's
// `llama` and `gpt2` tokenizers): fill a BpeTokenizerSpec and construct.
//
//   SentencePiece-style (Llama 2, Mistral): normalizer {prepend "▁", replace
//   " " -> "▁"}, no pre-tokenizer, merges (or scores), byte_fallback, decoder
//   {replace "▁" -> " ", byte_fallback, fuse, strip " " 1 0}.
//   Byte-level (GPT-2, Llama 3): pre-tokenizer {split REGEX, byte_level},
//   merges, ignore_merges, decoder {byte_level}.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llama/tokenizers/tokenizer.hpp"

namespace llama {

struct AddedToken {
  int32_t id = -1;
  std::string content;
  bool special = false;  // a control token: decode(skip_special) and parse_special = false skip it
  bool normalized = false;   // matched in the normalized text rather than the raw input
  bool lstrip = false;       // swallows whitespace on its left
  bool rstrip = false;       // swallows whitespace on its right
  bool single_word = false;  // only where no word character touches it
};

struct NormalizerStep {
  enum class Kind { prepend, replace };
  Kind kind = Kind::prepend;
  std::string pattern;  // replace: the literal text replaced
  std::string content;  // prepend: what is put in front of non-empty text; replace: the replacement
};

struct PreTokenizerStep {
  enum class Kind {
    split,       // `regex` matches become pre-tokens, the gaps between them too ("Isolated")
    byte_level,  // GPT-2's byte-to-unicode mapping (and with use_regex GPT-2's own split)
  };
  Kind kind = Kind::split;
  std::string regex;              // split: PCRE2 syntax (Oniguruma's for these patterns)
  bool add_prefix_space = false;  // byte_level: a space before text that has none
  bool use_regex = false;         // byte_level: split with GPT-2's pattern first
};

struct DecoderStep {
  enum class Kind {
    replace,        // `pattern` -> `content` in each token
    byte_fallback,  // runs of <0xXX> tokens -> their bytes (U+FFFD each if not valid UTF-8)
    fuse,           // every token into one
    strip,          // up to `start` leading and `stop` trailing `content` characters off each token
    byte_level,     // GPT-2's unicode-to-byte mapping, then UTF-8 (invalid -> U+FFFD)
  };
  Kind kind = Kind::replace;
  std::string pattern;
  std::string content;
  int32_t start = 0;
  int32_t stop = 0;
};

struct BpeModelSpec {
  std::vector<std::string> vocab;  // id -> piece, every id below vocab.size()
  // Merge rules in rank order (first merges first), as ids into vocab; the
  // merged piece is the two pieces joined and must be in vocab. Use
  // PieceIndex to turn "a b" lines into ids.
  std::vector<std::pair<int32_t, int32_t>> merges;
  // Instead of merges (SentencePiece's own rule, GGUF `llama`): merge the
  // adjacent pair whose joined piece is in vocab with the highest score,
  // leftmost on ties. One score per vocab entry.
  std::vector<float> scores;
  int32_t unk = -1;            // -1: none; a character nothing else covers is then an error
  bool fuse_unk = false;       // consecutive unknowns become one unk
  bool byte_fallback = false;  // unknown characters as <0xXX> tokens when the vocabulary has them
  bool ignore_merges = false;  // a pre-token found whole in vocab is that one token
};

// Exact-string lookup over a vocabulary (ids for pieces).
class PieceIndex {
 public:
  explicit PieceIndex(std::span<const std::string> pieces);
  int32_t find(std::string_view piece) const;  // -1 when absent
 private:
  struct Slot {
    uint32_t tag;  // high hash bits: most mismatches never touch the string
    int32_t id;    // -1: empty
  };
  std::span<const std::string> pieces_;
  std::vector<Slot> slots_;  // open addressing, linear probing
};

struct BpeTokenizerSpec {
  std::string source;  // names the tokenizer in messages (its file)
  std::string description = "BPE tokenizer";
  BpeModelSpec model;
  std::vector<AddedToken> added_tokens;  // ids may lie inside or beyond the model's vocab
  std::vector<NormalizerStep> normalizer;
  std::vector<PreTokenizerStep> pre_tokenizer;
  // What encode(add_special) puts around the text: special ids before and after.
  std::vector<int32_t> prefix_ids;
  std::vector<int32_t> suffix_ids;
  std::vector<DecoderStep> decoder;
  SpecialTokens special;
};

class BpeTokenizer final : public Tokenizer {
 public:
  // Validates the spec (ids in range, merges resolvable, added tokens
  // consistent, regexes compile) and throws Error naming spec.source.
  explicit BpeTokenizer(BpeTokenizerSpec spec);
  ~BpeTokenizer() override;
  BpeTokenizer(const BpeTokenizer&) = delete;
  BpeTokenizer& operator=(const BpeTokenizer&) = delete;

  std::string description() const override;
  std::vector<int32_t> encode(std::string_view text,
                              const EncodeOptions& options = {}) const override;
  std::string decode(std::span<const int32_t> ids, bool skip_special = false) const override;
  std::string decode_token(int32_t prev, int32_t token) const override;
  std::unique_ptr<TextStream> stream() const override;
  int64_t vocab_size() const override;
  std::string_view piece(int32_t id) const override;
  int32_t lookup(std::string_view piece) const override;
  bool is_special(int32_t id) const override;

  struct Impl;  // the built pipeline (bpe/pipeline.hpp)

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace llama
