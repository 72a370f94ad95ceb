// The bounds a BPE pipeline runs within, so that a hostile tokenizer file
// (tokenizer.json, a GGUF vocabulary) cannot turn a short text into gigabytes
// or minutes: limits on the pipeline's size checked at load, and budgets on
// the text each encode and decode may produce and the regex work an encode
// may spend. docs/robustness.md ("tokenizer.json pipelines") gives the values'
// reasons.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "llama/tokenizers/bpe_tokenizer.hpp"

namespace llama::bpe {

// At load. Real tokenizers have 1-4 steps per stage and 1-3 byte strings.
inline constexpr size_t kMaxSteps = 64;          // normalizer, pre_tokenizer, decoder (each)
inline constexpr size_t kMaxStepString = 256;    // Replace pattern/content, Prepend, Strip
inline constexpr size_t kMaxRegexLength = 4096;  // a Split pattern, in bytes
inline constexpr uint32_t kMaxLookbehind = 255;  // characters a Split lookbehind reads back

// Encode: the normalizer's output over all of one input's segments.
inline constexpr uint64_t kNormalizedPerByte = 16;
inline constexpr uint64_t kNormalizedSlack = 4096;
inline constexpr uint64_t kNormalizedMax = uint64_t{1} << 30;

// Decode: what one token's piece may become in the decoder steps.
inline constexpr uint64_t kDecodedPerByte = 16;
inline constexpr uint64_t kDecodedSlack = 64;

// Encode: regex work, in units of one PCRE2 step over one byte of window (an
// attempt's worst case) or, for the rare positions that need more than 16
// steps, one nanosecond of CPU time (regex.cpp).
inline constexpr uint64_t kRegexWorkPerByte = 2048;
inline constexpr uint64_t kRegexWorkSlack = uint64_t{1} << 26;

// Throws Error naming spec.source when a stage has too many steps or a step's
// string is too long (the regexes are checked when compiled).
void check_pipeline_limits(const BpeTokenizerSpec& spec);

// `per_byte` x `bytes` + `slack`, capped at `cap` (saturating, never overflows).
uint64_t scaled_limit(uint64_t bytes, uint64_t per_byte, uint64_t slack, uint64_t cap = UINT64_MAX);

// What an encode may still produce or spend; take() refuses rather than passing it.
class Budget {
 public:
  explicit Budget(uint64_t total) : total_(total), left_(total) {}
  bool take(uint64_t n) {
    if (n > left_) return false;
    left_ -= n;
    return true;
  }
  void give_back(uint64_t n) { left_ = n > total_ - left_ ? total_ : left_ + n; }
  uint64_t left() const { return left_; }
  uint64_t total() const { return total_; }

 private:
  uint64_t total_, left_;
};

}  // namespace llama::bpe
