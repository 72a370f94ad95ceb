// GET /metrics: the engine's counts in Prometheus' text format (version 0.0.4), every
// name prefixed llama_backends_, after llama.cpp's server's llamacpp: metrics.
#pragma once

#include <cstdint>
#include <string>

#include "engine.hpp"

namespace llama::server {

std::string prometheus_text(const EngineStats& stats, int32_t sequences);

}  // namespace llama::server
