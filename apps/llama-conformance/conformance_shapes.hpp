// The small model shapes the conformance checks write as random checkpoints:
// multi-head, grouped-query, multi-query, separate classifier and odd sizes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "llama/config.hpp"

namespace llama::conformance {

class ConformanceData;

struct Shape {
  std::string name;             // e.g. "grouped-query"
  std::vector<int32_t> header;  // dim, hidden, layers, heads, kv heads, vocab (< 0: separate
                                // classifier), seq_len
};
std::vector<Shape> generated_shapes();

// Writes a legacy (version 0) checkpoint of `shape` with seeded random weights in
// [-0.5, 0.5) to the run's scratch directory; returns its path.
std::string write_random_checkpoint(const ConformanceData& data, const Shape& shape, uint64_t seed);

// `count` tokens starting with BOS, spread over the vocabulary.
std::vector<int32_t> test_tokens(const Config& config, int64_t count);

}  // namespace llama::conformance
