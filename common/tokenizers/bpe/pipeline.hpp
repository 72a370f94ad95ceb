// BpeTokenizer::Impl: the built components of one BPE tokenizer.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "added_tokens.hpp"
#include "bpe_model.hpp"
#include "decoder.hpp"
#include "limits.hpp"
#include "llama/tokenizers/bpe_tokenizer.hpp"
#include "pre_tokenizer.hpp"

namespace llama {

struct BpeTokenizer::Impl {
  explicit Impl(BpeTokenizerSpec& spec);

  int64_t vocab_size = 0;  // model vocabulary and added ids together (set first: checks the spec)
  std::string source, description;
  bpe::BpeModel model;
  std::vector<NormalizerStep> normalizer;
  bpe::PreTokenizer pre_tokenizer;
  bpe::AddedTokenMatcher raw_added;         // matched in the input
  bpe::AddedTokenMatcher normalized_added;  // matched after normalization
  std::vector<int32_t> prefix_ids, suffix_ids;
  bpe::DecoderChain decoder;
  std::vector<std::string> extra;  // pieces of added ids beyond the model's vocabulary
  std::vector<uint8_t> special;    // per id: a special added token
  std::vector<AddedToken> added;   // by content, for lookup
  bool cut_at_mark = false;        // no pre-tokenizer and merges never cross before "▁"

  // The normalizer's output, charged to `budget` (its bytes); throws past it.
  std::string normalize(std::string_view text, bpe::Budget& budget) const;
  void encode_text(std::string_view text, size_t offset, bpe::Budget& regex_work,
                   std::vector<int32_t>& out) const;
  const std::string& piece(int32_t id) const;
};

}  // namespace llama
