// The fixed word list behind --prompt-tokens (prompt_text.hpp).
#include "prompt_text.hpp"

#include <array>
#include <string_view>

namespace llama::load {
namespace {

// A sentence cycle of everyday words: the words repeat with period 32, so any N gives
// the same prefix of one text.
constexpr std::array<std::string_view, 32> kWords = {
    "Once", "upon", "a",     "time", "there", "was",  "a",    "little", "girl", "who",   "liked",
    "to",   "play", "in",    "the",  "park",  "with", "her",  "dog",    "and",  "her",   "big",
    "red",  "ball", "every", "day",  "after", "she",  "came", "home",   "from", "school"};

// The digits of a variant: 16 words, distinct from each other.
constexpr std::array<std::string_view, 16> kDigits = {
    "Red",   "Blue", "Green", "Yellow", "Pink", "Brown", "Black", "White",
    "Small", "Tall", "Happy", "Sad",    "Fast", "Slow",  "Old",   "New"};

}  // namespace

std::string prompt_of_tokens(int64_t n) {
  std::string out;
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) out.push_back(' ');
    out.append(kWords[static_cast<size_t>(i) % kWords.size()]);
  }
  return out;
}

std::string prompt_of_tokens(int64_t n, uint64_t variant) {
  std::string out;
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) out.push_back(' ');
    if (i < kVariantWords) {
      // least significant digit first: successive variants differ in their first word
      const int shift = static_cast<int>(4 * i);
      out.append(kDigits[(variant >> shift) % kDigits.size()]);
    } else {
      out.append(kWords[static_cast<size_t>(i) % kWords.size()]);
    }
  }
  return out;
}

}  // namespace llama::load
