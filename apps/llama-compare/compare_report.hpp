// Writes a Comparison as text (a line per backend) or as one JSON object.
#pragma once

#include <cstdint>
#include <ostream>

#include "comparison.hpp"

namespace llama::compare {

void write_text(const Comparison& c, double tolerance, uint64_t seed, std::ostream& out);
void write_json(const Comparison& c, double tolerance, uint64_t seed, std::ostream& out);

}  // namespace llama::compare
