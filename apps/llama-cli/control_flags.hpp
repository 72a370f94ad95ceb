// llama-cli's generation controls: --max-tokens, --stop, --ignore-eos,
// --ctx-size, --truncate-prompt, --logprobs; declared on the Boost options
// and checked into GenerationOptions' terms.
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "llama/prompt_fit.hpp"

namespace llama::cli {

struct ControlFlags {
  int64_t max_tokens = 0;         // 0: no limit beside --steps
  std::vector<std::string> stop;  // stop strings, none empty
  bool ignore_eos = false;
  int64_t ctx_size = 0;  // 0: the model's seq_len; checked against it once the model is open
  PromptTruncation truncation = PromptTruncation::refuse;
  int logprobs = -1;  // -1: off; 0..20 with --format json
};

class ControlFlagParser {
 public:
  void add_to(boost::program_options::options_description& desc);
  // Throws UsageError naming the flag. `json`: whether --format json was asked
  // for (--logprobs needs it).
  ControlFlags finish(const boost::program_options::variables_map& vm, bool json) const;

 private:
  ControlFlags flags_;
  int64_t max_tokens_ = 0;
  int64_t ctx_size_ = 0;
  int64_t logprobs_ = -1;
  std::string truncation_;
};

}  // namespace llama::cli
