// The command-line flags shared by the apps that generate text (llama-cli,
// llama-compare): checkpoint, tokenizer, prompt, sampling, steps, threads.
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "usage_error.hpp"

namespace llama::cli {

struct GenerationFlags {
  std::string checkpoint;
  std::string tokenizer;  // tokenizer.bin, tokenizer.json or a directory holding one;
                          // empty: beside the checkpoint, else ./tokenizer.bin
  std::string prompt;
  float temperature = 0.0f;
  float top_p = 0.9f;
  int64_t steps = 256;
  std::optional<uint64_t> seed;  // unset or 0: the time, as run.c
  int threads = 0;               // 0: every core
};

// Declares the flags on a Boost options description, then validates what was
// parsed:
//   GenerationFlagParser flags;
//   flags.add_to(desc);  ... po::store, po::notify ...
//   GenerationFlags g = flags.finish(vm);
class GenerationFlagParser {
 public:
  void add_to(boost::program_options::options_description& desc);
  // Checks presence and ranges; throws UsageError naming the flag.
  // `checkpoint_required` false: an action that needs only the tokenizer.
  GenerationFlags finish(const boost::program_options::variables_map& vm,
                         bool checkpoint_required = true) const;

 private:
  GenerationFlags flags_;
  double temperature_ = 0.0;
  double top_p_ = 0.9;
  int64_t steps_ = 256;
  int64_t threads_ = 0;
  std::string seed_;
};

// The tokenizer path to use: `tokenizer` if given, else tokenizer.bin beside
// the checkpoint, else tokenizer.bin in the working directory.
std::string resolve_tokenizer_path(const std::string& checkpoint, const std::string& tokenizer);

}  // namespace llama::cli
