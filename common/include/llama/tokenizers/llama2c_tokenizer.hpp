// The llama2.c tokenizer: reads tokenizer.bin, encodes text exactly as run.c
// does (with a priority-queue merge instead of run.c's quadratic rescans, same
// ids), decodes pieces and filters output as run.c's safe_printf.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "llama/tokenizers/tokenizer.hpp"

namespace llama {

// run.c's fixed ids.
inline constexpr int32_t kBosToken = 1;
inline constexpr int32_t kEosToken = 2;

class Llama2cTokenizer final : public Tokenizer {
 public:
  // Reads the first `vocab_size` entries of a tokenizer.bin file, or all of
  // them to the end of the file when `vocab_size` is 0.
  Llama2cTokenizer(const std::string& path, int64_t vocab_size);
  // Parses tokenizer.bin bytes held in memory; `source` names them in errors.
  static Llama2cTokenizer parse(std::span<const std::byte> bytes, const std::string& source,
                                int64_t vocab_size);
  // The lookup index holds views into the vocabulary, so a copy rebuilds it.
  Llama2cTokenizer(const Llama2cTokenizer& other);
  Llama2cTokenizer& operator=(const Llama2cTokenizer& other);
  Llama2cTokenizer(Llama2cTokenizer&&) noexcept = default;
  Llama2cTokenizer& operator=(Llama2cTokenizer&&) noexcept = default;

  std::string description() const override { return "llama2.c tokenizer.bin"; }

  // run.c's encode: optional BOS, a dummy-prefix " " for non-empty text, one
  // token per code point (byte fallback <0xXX> = byte + 3), then merges of the
  // best-scoring adjacent pair (leftmost on ties) until none is left. Throws
  // Error when the vocabulary can represent neither a code point nor its bytes.
  std::vector<int32_t> encode(std::string_view text, bool bos, bool eos) const;
  // add_special: BOS (never EOS, as run.c); parse_special has no effect.
  std::vector<int32_t> encode(std::string_view text,
                              const EncodeOptions& options = {}) const override;

  // run.c's decode: the text of `token` following `prev`, a leading space after
  // BOS dropped and raw-byte tokens <0xXX> turned into that byte.
  std::string decode_token(int32_t prev, int32_t token) const override;
  // decode_token over the ids in order (BOS and EOS left out with skip_special).
  std::string decode(std::span<const int32_t> ids, bool skip_special = false) const override;
  // run.c's output: BOS prints nothing (run.c never prints position 0's token
  // and stops at a sampled BOS), every other token decode_token(prev, token)
  // unless is_printable_piece refuses it.
  std::unique_ptr<TextStream> stream() const override;

  // run.c's safe_printf filter: false for a lone unprintable control byte.
  static bool is_printable_piece(std::string_view piece);

  int64_t vocab_size() const override { return static_cast<int64_t>(vocab_.size()); }
  std::string_view piece(int32_t token) const override;
  int32_t lookup(std::string_view s) const override;
  bool is_special(int32_t id) const override { return id == kBosToken || id == kEosToken; }
  float score(int32_t token) const { return scores_.at(static_cast<size_t>(token)); }
  int32_t max_token_length() const { return max_token_length_; }

 private:
  Llama2cTokenizer() = default;
  void build_index();
  void set_special();
  std::vector<std::string> vocab_;
  std::vector<float> scores_;
  std::unordered_map<std::string_view, int32_t> index_;  // views into vocab_
  int32_t max_token_length_ = 0;
  std::string source_;  // the file it came from, for messages
};

}  // namespace llama
