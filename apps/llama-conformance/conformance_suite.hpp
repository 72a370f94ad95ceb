// The conformance suite: every check llama-conformance runs on a backend spec, grouped by
// the weight format it needs (f32, Q8_0), each with an id ("f32/streams") for --check and
// a line of the report.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "conformance_checks.hpp"
#include "llama/tensor.hpp"

namespace llama::conformance {

class ConformanceData;

struct SuiteCheck {
  std::string id;      // "format/name", e.g. "q8_0/streams"
  std::string format;  // the weight format it needs: "f32", "q8_0", or "" (any)
  std::string title;   // what must hold
  std::string covers;  // on what: models, cases, positions
  // Returns CheckResult::not_claimed set where the backend claims the property on
  // none of the check's models.
  std::function<CheckResult(const ConformanceData&, const std::string& spec)> run;
};

// Every check, in the order they run.
const std::vector<SuiteCheck>& suite_checks();
bool is_check_id(const std::string& id);

enum class Outcome { passed, failed, not_claimed };
const char* to_string(Outcome outcome);

struct CheckOutcome {
  const SuiteCheck* check = nullptr;
  Outcome outcome = Outcome::passed;
  std::string detail;  // the failure, or why the check did not run
  double seconds = 0;
};

struct SuiteReport {
  std::string spec;
  DTypeSet claimed;  // what the backend's supported_dtypes() says it runs
  std::vector<CheckOutcome> checks;
  int count(Outcome outcome) const;
  bool ok() const { return count(Outcome::failed) == 0 && count(Outcome::passed) > 0; }
};

// Runs the checks whose id is in `only` (all when empty) on `spec`, calling `progress`
// after each; throws Error for an id in `only` that names no check. A check of a weight
// format the backend does not claim (supported_dtypes) is not run: it is reported as not
// claimed, and "unclaimed-refused" checks that prepare refuses such models instead.
SuiteReport run_suite(const ConformanceData& data, const std::string& spec,
                      const std::vector<std::string>& only,
                      const std::function<void(const CheckOutcome&)>& progress);

}  // namespace llama::conformance
