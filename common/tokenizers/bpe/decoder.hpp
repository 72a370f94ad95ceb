// The decoder chain (Replace, ByteFallback, Fuse, Strip, ByteLevel) run as a
// stream: each token's piece goes through the steps in order and text comes
// out as soon as no later token can change it. Whole-text decode is the same
// stream fed every token, so both give exactly tokenizers' decode().
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "llama/tokenizers/bpe_tokenizer.hpp"
#include "utf8.hpp"

namespace llama::bpe {

class DecoderChain {
 public:
  DecoderChain(std::vector<DecoderStep> steps, const std::string& source);
  const std::vector<DecoderStep>& steps() const { return steps_; }
  const std::string& source() const { return source_; }

 private:
  std::vector<DecoderStep> steps_;
  std::string source_;
};

class DecoderStream {
 public:
  // `lossless`: the bytes as they come (no UTF-8 hold-back or U+FFFD), and no
  // leading strip (decode_token of a token after another).
  explicit DecoderStream(const DecoderChain& chain, bool lossless = false);
  std::string push(std::string_view piece);
  std::string finish();

 private:
  struct StepState {
    std::string run;  // byte_fallback: bytes of the current <0xXX> run; strip: held trailing
    size_t run_tokens = 0;
    int32_t to_strip = 0;  // strip over the whole text: leading characters still to drop
    bool whole = false;    // the step sees one fused text rather than tokens
  };
  // `limit`: the most bytes a token may become here (from what entered the chain).
  void feed(size_t step, std::string token, std::string& out, uint64_t limit);
  void flush(size_t step, std::string& out);
  const DecoderChain& chain_;
  std::vector<StepState> state_;
  bool lossless_;
  Utf8Stream utf8_;
};

}  // namespace llama::bpe
