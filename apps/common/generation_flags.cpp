// Declares and validates the generation flags shared by the apps.
#include "generation_flags.hpp"

#include "llama/formats/hf_checkpoint.hpp"
#include "seed_flag.hpp"

#include <cmath>
#include <filesystem>
#include <limits>

namespace po = boost::program_options;

namespace llama::cli {

void GenerationFlagParser::add_to(po::options_description& desc) {
  desc.add_options()(
      "checkpoint,c", po::value(&flags_.checkpoint)->value_name("FILE"),
      "llama2.c checkpoint, or a Hugging Face directory (or its model.safetensors) (required)")(
      "tokenizer,k", po::value(&flags_.tokenizer)->value_name("FILE"),
      "tokenizer.bin, tokenizer.json or a directory holding tokenizer.json (default: "
      "tokenizer.bin beside the checkpoint, else ./tokenizer.bin)")(
      "temperature,t", po::value(&temperature_)->value_name("NUM"),
      "sampling temperature, 0 = greedy (default 0)")(
      "top-p", po::value(&top_p_)->value_name("NUM"),
      "nucleus sampling threshold in [0,1] (default 0.9)")(
      "steps,s", po::value(&steps_)->value_name("NUM"),
      "positions to run, prompt included; 0 = seq_len (default 256)")(
      "prompt,p", po::value(&flags_.prompt)->value_name("TEXT"), "prompt (default empty)")(
      "seed,r", po::value(&seed_)->value_name("NUM"), "random seed (default: the time)")(
      "threads,j", po::value(&threads_)->value_name("NUM"), "threads (default: all cores)");
}

GenerationFlags GenerationFlagParser::finish(const po::variables_map& vm,
                                             bool checkpoint_required) const {
  GenerationFlags g = flags_;
  if (g.checkpoint.empty() && checkpoint_required) {
    throw UsageError("--checkpoint: required (-c FILE)");
  }
  // An empty -k would fall back to the checkpoint's tokenizer.bin, and with --tokenize
  // there may be no checkpoint at all (fuzz/fuzz_cli_args).
  if (vm.count("tokenizer") && g.tokenizer.empty()) {
    throw UsageError("--tokenizer: must name a file or directory, got ''");
  }
  // Finite as a float too: 1e154 passes as a double and becomes inf (fuzz/fuzz_cli_args).
  if (!std::isfinite(temperature_) || temperature_ < 0 ||
      temperature_ > std::numeric_limits<float>::max()) {
    throw UsageError("--temperature: must be a finite number >= 0, got " +
                     std::to_string(temperature_));
  }
  if (!(top_p_ >= 0.0 && top_p_ <= 1.0)) {
    throw UsageError("--top-p: must be in [0, 1], got " + std::to_string(top_p_));
  }
  if (steps_ < 0) throw UsageError("--steps: must be >= 0, got " + std::to_string(steps_));
  if (vm.count("threads") && (threads_ < 1 || threads_ > 1024)) {
    throw UsageError("--threads: must be in [1, 1024], got " + std::to_string(threads_));
  }
  g.temperature = static_cast<float>(temperature_);
  g.top_p = static_cast<float>(top_p_);
  g.steps = steps_;
  g.threads = static_cast<int>(threads_);
  if (vm.count("seed")) {
    const uint64_t seed = parse_seed(seed_);
    if (seed != 0) g.seed = seed;  // 0: the time, as run.c
  }
  return g;
}

std::string resolve_tokenizer_path(const std::string& checkpoint, const std::string& tokenizer) {
  if (!tokenizer.empty()) return tokenizer;
  // A Hugging Face checkpoint's tokenizer.json is in its directory.
  if (looks_like_hf_checkpoint(checkpoint)) return find_hf_files(checkpoint).directory;
  const auto beside = std::filesystem::path(checkpoint).parent_path() / "tokenizer.bin";
  std::error_code ec;
  if (std::filesystem::exists(beside, ec)) return beside.string();
  return "tokenizer.bin";
}

}  // namespace llama::cli
