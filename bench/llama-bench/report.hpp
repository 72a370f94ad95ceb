// The benchmark report: one JSON document (settings, machine, rooflines,
// one result per configuration) and its markdown and CSV renderings.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "bench_options.hpp"
#include "model_cost.hpp"
#include "rooflines.hpp"

namespace llama::bench {

nlohmann::json roofline_json(const Roofline& r);
nlohmann::json settings_json(const BenchOptions& o);

// The checkpoint's identity and sizes: path, name, config, parameters, bytes.
nlohmann::json model_json(const std::string& path, const Model& model, const ModelCost& cost);

// One configuration's result from a child's raw samples (see
// run_configuration), with the roofline fractions of its thread count.
// `depth` is 0 when decode at depth was skipped.
nlohmann::json result_json(const nlohmann::json& model, const ModelCost& cost,
                           const std::string& backend, int threads, const BenchOptions& o,
                           int64_t depth, const nlohmann::json& raw, const Roofline& roofline);

// A configuration that failed: every measurement null, `error` set.
nlohmann::json failed_result_json(const nlohmann::json& model, const std::string& backend,
                                  int threads, const std::string& error);

// One --parallel count's figures (parallel_report.cpp) from its child's raw result,
// against `single`, the same configuration's result (its single-sequence decode).
nlohmann::json parallel_json(const nlohmann::json& model, const ModelCost& cost,
                             const BenchOptions& o, const nlohmann::json& raw,
                             const nlohmann::json& single);
// The markdown table of every result's --parallel figures ("" when there are none).
std::string format_parallel_markdown(const nlohmann::json& report);

std::string format_markdown(const nlohmann::json& report);
std::string format_csv(const nlohmann::json& report);

}  // namespace llama::bench
