// How llama-conformance reports: a line per check as it finishes and a verdict per
// backend (text), or one JSON object at the end.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "conformance_suite.hpp"

namespace llama::conformance {

// "blas (built in)", "counting:eigen (counting built in; eigen from plugin eigen, FILE)".
std::string describe_spec(const std::string& spec);

void write_heading(const std::string& spec, std::ostream& out);
void write_check_line(const CheckOutcome& c, std::ostream& out);
void write_verdict(const SuiteReport& r, std::ostream& out);

nlohmann::json report_json(const SuiteReport& r);

}  // namespace llama::conformance
