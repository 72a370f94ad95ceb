// --numerics exact|fast, declared and parsed the same way by every app that
// runs a model (llama-cli, llama-compare, llama-perplexity, llama-bench,
// llama-conformance): the value goes into BackendOptions::numerics.
#pragma once

#include <boost/program_options.hpp>
#include <string>

#include "llama/numerics.hpp"

namespace llama::cli {

// Declares --numerics on `desc`, its text into `value` (default "exact").
void add_numerics_flag(boost::program_options::options_description& desc, std::string& value);

// The policy `text` names; throws UsageError naming --numerics otherwise.
Numerics parse_numerics_flag(const std::string& text);

}  // namespace llama::cli
