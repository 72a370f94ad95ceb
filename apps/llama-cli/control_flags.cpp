// Declares and validates llama-cli's generation controls.
#include "control_flags.hpp"

#include "llama/error.hpp"
#include "llama/logprobs.hpp"
#include "usage_error.hpp"

namespace po = boost::program_options;

namespace llama::cli {

void ControlFlagParser::add_to(po::options_description& desc) {
  desc.add_options()("max-tokens,n", po::value(&max_tokens_)->value_name("N"),
                     "at most N generated tokens (beside -s, which counts positions)")(
      "stop", po::value(&flags_.stop)->value_name("TEXT")->composing(),
      "end generation where the generated text contains TEXT (repeatable); the text from "
      "it on is not printed")("ignore-eos",
                              "a sampled EOS (or llama2.c's BOS) does not end generation")(
      "ctx-size", po::value(&ctx_size_)->value_name("N"),
      "positions of context (default: the model's)")(
      "truncate-prompt", po::value(&truncation_)->value_name("left|right"),
      "a prompt longer than the context keeps its beginning (left) or end (right) instead "
      "of being refused")("logprobs", po::value(&logprobs_)->value_name("K"),
                          "with --format json: each generated token's log-probability and "
                          "the K (0..20) most likely alternatives");
}

ControlFlags ControlFlagParser::finish(const po::variables_map& vm, bool json) const {
  ControlFlags f = flags_;
  if (vm.count("max-tokens") && max_tokens_ < 1) {
    throw UsageError("--max-tokens: must be at least 1, got " + std::to_string(max_tokens_));
  }
  f.max_tokens = max_tokens_;
  for (const std::string& s : f.stop) {
    if (s.empty()) throw UsageError("--stop: must not be empty");
  }
  f.ignore_eos = vm.count("ignore-eos") > 0;
  if (vm.count("ctx-size") && ctx_size_ < 1) {
    throw UsageError("--ctx-size: must be at least 1, got " + std::to_string(ctx_size_));
  }
  f.ctx_size = ctx_size_;
  if (vm.count("truncate-prompt")) {
    if (truncation_ != "left" && truncation_ != "right") {
      throw UsageError("--truncate-prompt: must be left or right, got '" + truncation_ + "'");
    }
    f.truncation = parse_prompt_truncation(truncation_);
  }
  if (vm.count("logprobs")) {
    if (logprobs_ < 0 || logprobs_ > kMaxTopLogprobs) {
      throw UsageError("--logprobs: must be in [0, " + std::to_string(kMaxTopLogprobs) + "], got " +
                       std::to_string(logprobs_));
    }
    if (!json) throw UsageError("--logprobs: needs --format json");
    f.logprobs = static_cast<int>(logprobs_);
  }
  return f;
}

}  // namespace llama::cli
