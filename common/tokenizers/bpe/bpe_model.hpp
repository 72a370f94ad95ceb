// The BPE model of the pipeline: a word (one pre-token) to ids. Initial
// symbols are the word's characters (unknown ones as <0xXX> byte tokens with
// byte_fallback, else unk), then the shared pair-merge loop by merge rank or
// by score. Shared by tokenizer.json and GGUF vocabularies.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "llama/tokenizers/bpe_tokenizer.hpp"

namespace llama::bpe {

// (left id, right id) -> (rank, merged id); open addressing with linear probing.
class PairTable {
 public:
  struct Entry {
    uint64_t key = kEmpty;
    int32_t rank = 0;
    int32_t merged = 0;
  };
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  explicit PairTable(size_t expected = 0);
  // A later rule for the same pair replaces an earlier one (tokenizers' HashMap collect).
  void insert(int32_t left, int32_t right, int32_t rank, int32_t merged);
  const Entry* find(int32_t left, int32_t right) const {
    const uint64_t key = pack(left, right);
    for (size_t i = slot(key);; i = (i + 1) & mask_) {
      const Entry& e = entries_[i];
      if (e.key == key) return &e;
      if (e.key == kEmpty) return nullptr;
    }
  }
  size_t size() const { return size_; }

 private:
  static uint64_t pack(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }
  // Fibonacci hashing: the product's top bits depend on every key bit.
  size_t slot(uint64_t key) const {
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  void grow();
  std::vector<Entry> entries_;
  size_t mask_ = 0;
  int shift_ = 64;  // 64 - log2(entries_.size())
  size_t size_ = 0;
};

class BpeModel {
 public:
  // Validates ids and merges; `source` prefixes errors.
  BpeModel(BpeModelSpec spec, const std::string& source);

  // Appends the ids of `word`; throws Error naming `source` and `offset`
  // (the word's place in the input) for a character nothing covers.
  void encode_word(std::string_view word, size_t offset, std::vector<int32_t>& out) const;

  // With ignore_merges, the id of a word found whole in the vocabulary; else -1.
  int32_t whole_word(std::string_view word) const {
    return ignore_merges_ ? index_.find(word) : -1;
  }

  int64_t vocab_size() const { return static_cast<int64_t>(vocab_.size()); }
  const std::string& piece(int32_t id) const { return vocab_[static_cast<size_t>(id)]; }
  int32_t lookup(std::string_view s) const { return index_.find(s); }
  // A <0xXX> token (byte_fallback's), the byte it stands for, else -1.
  int32_t byte_of(int32_t id) const;
  // True when no merge result contains a character other than `mark` followed
  // by `mark`: then text can be cut before each such `mark` without changing
  // the merges (SentencePiece-style vocabularies with mark "▁").
  bool merges_never_cross_before(std::string_view mark) const;

 private:
  void initial_symbols(std::string_view word, size_t offset, std::vector<int32_t>& out) const;
  std::vector<std::string> vocab_;
  PieceIndex index_;  // views vocab_
  PairTable pairs_;
  std::vector<float> scores_;
  std::array<int32_t, 256> byte_ids_;  // <0xXX> ids, -1 when absent
  std::vector<int32_t> char_ids_;      // ids of the characters below U+0800, -1 when absent
  int32_t unk_;
  bool fuse_unk_, byte_fallback_, ignore_merges_;
  std::string source_;
};

}  // namespace llama::bpe
