// Llama2cTokenizer::encode: run.c's encoder (dummy prefix, one token per code
// point with byte fallback, best-score pair merges), with the merges run by the
// shared priority-queue loop (bpe/pair_merge.hpp) instead of run.c's rescan of
// every pair after each merge; the ids are the same (tests/test_tokenizer.cpp
// checks them against the rescanning loop on random texts).
#include <optional>

#include "../bpe/pair_merge.hpp"
#include "llama/error.hpp"
#include "llama/tokenizers/llama2c_tokenizer.hpp"

namespace llama {

std::vector<int32_t> Llama2cTokenizer::encode(std::string_view text,
                                              const EncodeOptions& options) const {
  return encode(text, options.add_special, false);
}

std::vector<int32_t> Llama2cTokenizer::encode(std::string_view text, bool bos, bool eos) const {
  // BOS and EOS take part in the merge search, which indexes the vocabulary with them.
  auto require_special = [&](bool wanted, int32_t id, const char* name) {
    if (wanted && id >= vocab_size()) {
      throw Error(source_ + ": cannot encode with " + name + " (id " + std::to_string(id) +
                  "): the vocabulary has " + std::to_string(vocab_size()) + " entries");
    }
  };
  require_special(bos, kBosToken, "BOS");
  require_special(eos, kEosToken, "EOS");
  std::vector<int32_t> tokens;
  tokens.reserve(text.size() + 3);
  if (bos) tokens.push_back(kBosToken);

  auto push_bytes = [&](std::string_view bytes, std::string_view what) {
    for (unsigned char b : bytes) {
      const int32_t id = static_cast<int32_t>(b) + 3;
      if (id >= vocab_size()) {
        throw Error(source_ + ": cannot encode " + std::string(what) +
                    ": the vocabulary has neither it nor byte-fallback token <0x" +
                    "0123456789ABCDEF"[b >> 4] + "0123456789ABCDEF"[b & 15] + ">");
      }
      tokens.push_back(id);
    }
  };

  if (!text.empty()) {
    // The dummy prefix; vocabularies without " " (small test models) fall back to its byte.
    const int32_t space = lookup(" ");
    if (space >= 0) {
      tokens.push_back(space);
    } else {
      push_bytes(" ", "the dummy-prefix space");
    }
  }

  // One token per UTF-8 code point (at most 4 bytes), else its bytes. Unlike
  // run.c, a run of more than 3 continuation bytes starts a new group instead
  // of overflowing run.c's buffer; well-formed UTF-8 encodes identically.
  size_t start = 0;
  while (start < text.size()) {
    size_t end = start + 1;
    while (end < text.size() && end - start < 4 &&
           (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) {
      ++end;
    }
    const std::string_view cp = text.substr(start, end - start);
    const int32_t id = lookup(cp);
    if (id >= 0) {
      tokens.push_back(id);
    } else {
      push_bytes(cp, "the text's bytes at offset " + std::to_string(start));
    }
    start = end;
  }

  // run.c merges the pair whose concatenation has the highest score (strictly
  // above its starting best of -1e10, so NaN and lower scores never merge), the
  // leftmost on ties: smallest key -score first. Like run.c, BOS takes part.
  std::string merged;
  bpe::merge_pairs<float>(tokens, [&](int32_t left, int32_t right) {
    merged.assign(vocab_[static_cast<size_t>(left)]);
    merged += vocab_[static_cast<size_t>(right)];
    const int32_t id = lookup(merged);
    if (id < 0) return std::optional<bpe::PairMerge<float>>();
    const float score = scores_[static_cast<size_t>(id)];
    if (!(score > -1e10f)) return std::optional<bpe::PairMerge<float>>();
    return std::optional<bpe::PairMerge<float>>(bpe::PairMerge<float>{-score, id});
  });

  if (eos) tokens.push_back(kEosToken);
  return tokens;
}

}  // namespace llama
