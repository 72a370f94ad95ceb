// The llama2.c BPE tokenizer: reads tokenizer.bin, encodes text exactly as
// run.c does, decodes pieces and filters them as run.c's safe_printf.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace llama {

inline constexpr int32_t kBosToken = 1;
inline constexpr int32_t kEosToken = 2;

class Tokenizer {
 public:
  // Reads the first `vocab_size` entries of a tokenizer.bin file.
  Tokenizer(const std::string& path, int64_t vocab_size);
  // Parses tokenizer.bin bytes held in memory; `source` names them in errors.
  static Tokenizer parse(std::span<const std::byte> bytes, const std::string& source,
                         int64_t vocab_size);
  // The lookup index holds views into the vocabulary, so a copy rebuilds it.
  Tokenizer(const Tokenizer& other);
  Tokenizer& operator=(const Tokenizer& other);
  Tokenizer(Tokenizer&&) noexcept = default;
  Tokenizer& operator=(Tokenizer&&) noexcept = default;

  // run.c's encode: optional BOS, a dummy-prefix " " for non-empty text, one
  // token per code point (byte fallback <0xXX> = byte + 3), then greedy merges
  // of the best-scoring adjacent pair. Throws Error when the vocabulary can
  // represent neither a code point nor its bytes.
  std::vector<int32_t> encode(std::string_view text, bool bos, bool eos) const;

  // The text of `token` following `prev`: a leading space after BOS is
  // dropped and raw-byte tokens <0xXX> become that byte.
  std::string decode(int32_t prev, int32_t token) const;

  // run.c's safe_printf filter: false for a lone unprintable control byte.
  static bool is_printable_piece(std::string_view piece);

  int64_t vocab_size() const { return static_cast<int64_t>(vocab_.size()); }
  const std::string& piece(int32_t token) const;
  float score(int32_t token) const { return scores_.at(static_cast<size_t>(token)); }
  int32_t max_token_length() const { return max_token_length_; }
  // Token id of exact string `s`, or -1.
  int32_t lookup(std::string_view s) const;

 private:
  Tokenizer() = default;
  void build_index();
  std::vector<std::string> vocab_;
  std::vector<float> scores_;
  std::unordered_map<std::string_view, int32_t> index_;  // views into vocab_
  int32_t max_token_length_ = 0;
  std::string source_;  // the file it came from, for messages
};

}  // namespace llama
