// check_pipeline_limits and scaled_limit (limits.hpp).
#include "limits.hpp"

#include "llama/error.hpp"

namespace llama::bpe {
namespace {

void check_count(size_t n, const char* stage, const std::string& source) {
  if (n > kMaxSteps) {
    throw Error(source + ": " + stage + " has " + std::to_string(n) + " steps, more than " +
                std::to_string(kMaxSteps));
  }
}

void check_string(const std::string& s, const char* stage, size_t step, const char* what,
                  const std::string& source) {
  if (s.size() > kMaxStepString) {
    throw Error(source + ": " + stage + " step " + std::to_string(step) + " (" + what + ") has a " +
                std::to_string(s.size()) + "-byte string, more than " +
                std::to_string(kMaxStepString));
  }
}

}  // namespace

void check_pipeline_limits(const BpeTokenizerSpec& spec) {
  const std::string& src = spec.source;
  check_count(spec.normalizer.size(), "normalizer", src);
  check_count(spec.pre_tokenizer.size(), "pre_tokenizer", src);
  check_count(spec.decoder.size(), "decoder", src);
  for (size_t i = 0; i < spec.normalizer.size(); ++i) {
    const NormalizerStep& s = spec.normalizer[i];
    const char* what = s.kind == NormalizerStep::Kind::prepend ? "Prepend" : "Replace";
    check_string(s.pattern, "normalizer", i, what, src);
    check_string(s.content, "normalizer", i, what, src);
  }
  for (size_t i = 0; i < spec.decoder.size(); ++i) {
    const DecoderStep& s = spec.decoder[i];
    const char* what = s.kind == DecoderStep::Kind::strip ? "Strip" : "Replace";
    check_string(s.pattern, "decoder", i, what, src);
    check_string(s.content, "decoder", i, what, src);
  }
  for (size_t i = 0; i < spec.pre_tokenizer.size(); ++i) {
    const std::string& r = spec.pre_tokenizer[i].regex;
    if (r.size() > kMaxRegexLength) {
      throw Error(src + ": pre_tokenizer step " + std::to_string(i) + " (Split) has a " +
                  std::to_string(r.size()) + "-byte regex, more than " +
                  std::to_string(kMaxRegexLength));
    }
  }
}

uint64_t scaled_limit(uint64_t bytes, uint64_t per_byte, uint64_t slack, uint64_t cap) {
  uint64_t r = 0;
  if (__builtin_mul_overflow(bytes, per_byte, &r) || __builtin_add_overflow(r, slack, &r)) {
    return cap;
  }
  return r < cap ? r : cap;
}

}  // namespace llama::bpe
