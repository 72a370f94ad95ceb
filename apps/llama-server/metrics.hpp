// GET /metrics: the engine's counts in Prometheus' text format (version 0.0.4), every
// name prefixed llama_backends_, after llama.cpp's server's llamacpp: metrics.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine.hpp"

namespace llama::server {

// `sequences`: each sequence's state, `context` the positions each holds.
std::string prometheus_text(const EngineStats& stats, const std::vector<SequenceState>& sequences,
                            int64_t context);

}  // namespace llama::server
