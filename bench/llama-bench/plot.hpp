// --plot: a PNG of tokens/s per backend and model (decode and prefill side
// by side, log scale) with each bar's roofline marked, drawn by gnuplot.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace llama::bench {

// The gnuplot script that draws `report` into `png_path`.
std::string plot_script(const nlohmann::json& report, const std::string& png_path);

// Throws Error unless a gnuplot executable is on PATH (checked before a long run).
void require_gnuplot();

// Runs gnuplot on plot_script; throws Error naming the file on failure.
void write_plot(const nlohmann::json& report, const std::string& png_path);

}  // namespace llama::bench
