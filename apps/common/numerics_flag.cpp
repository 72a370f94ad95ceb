// --numerics for every app that runs a model (numerics_flag.hpp).
#include "numerics_flag.hpp"

#include "usage_error.hpp"

namespace llama::cli {

void add_numerics_flag(boost::program_options::options_description& desc, std::string& value) {
  desc.add_options()(
      "numerics",
      boost::program_options::value(&value)->default_value("exact")->value_name("exact|fast"),
      "exact: bf16/f16 weights upcast exactly, f32 math (default); fast: prefill "
      "may round activations to bf16 for the CPU's bf16 units (AMX tiles, else oneDNN on "
      "AVX512-BF16)");
}

Numerics parse_numerics_flag(const std::string& text) {
  return parse_flag_value(parse_numerics, text, "--numerics");
}

}  // namespace llama::cli
