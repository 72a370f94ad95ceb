// The text and JSON reports of a conformance run.
#include "conformance_report.hpp"

#include <iomanip>
#include <sstream>

#include "llama/registry.hpp"

namespace llama::conformance {
namespace {

std::string origin_of(const std::string& name) {
  const auto& registry = BackendRegistry::instance();
  for (const RegistryEntry& e : registry.entries()) {
    if (e.name != name || e.origin.empty()) continue;
    for (const LoadedPlugin& p : registry.plugins()) {
      if (p.file == e.origin) return "from plugin " + p.name + ", " + p.file;
    }
  }
  return "built in";
}

}  // namespace

std::string describe_spec(const std::string& spec) {
  std::vector<std::string> names;
  std::stringstream parts(spec);
  for (std::string name; std::getline(parts, name, ':');) names.push_back(name);
  if (names.size() == 1) return spec + " (" + origin_of(spec) + ")";
  std::string out = spec + " (";
  for (size_t i = 0; i < names.size(); ++i) {
    out += (i == 0 ? "" : "; ") + names[i] + " " + origin_of(names[i]);
  }
  return out + ")";
}

void write_heading(const std::string& spec, std::ostream& out) {
  out << "backend " << describe_spec(spec) << ", runs "
      << BackendRegistry::instance().create(spec)->supported_dtypes().to_string() << "\n";
}

void write_check_line(const CheckOutcome& c, std::ostream& out) {
  const char* label = c.outcome == Outcome::passed   ? "PASS"
                      : c.outcome == Outcome::failed ? "FAIL"
                                                     : "NOT CLAIMED";
  std::ostringstream seconds;
  if (c.outcome != Outcome::not_claimed)
    seconds << std::fixed << std::setprecision(1) << c.seconds << " s";
  out << "  " << std::left << std::setw(12) << label << std::setw(20) << c.check->id << std::right
      << std::setw(7) << seconds.str() << "  " << c.check->title;
  if (c.outcome == Outcome::passed) {
    out << " (" << c.check->covers << ")";
  } else {
    out << ": " << c.detail;
  }
  out << "\n";
}

void write_verdict(const SuiteReport& r, std::ostream& out) {
  out << r.spec << ": " << r.count(Outcome::passed) << " passed, " << r.count(Outcome::failed)
      << " failed, " << r.count(Outcome::not_claimed)
      << " not claimed: " << (r.ok() ? "conforms" : "DOES NOT CONFORM") << "\n";
}

nlohmann::json report_json(const SuiteReport& r) {
  nlohmann::json checks = nlohmann::json::array();
  for (const CheckOutcome& c : r.checks) {
    checks.push_back({{"id", c.check->id},
                      {"format", c.check->format},
                      {"title", c.check->title},
                      {"covers", c.check->covers},
                      {"outcome", to_string(c.outcome)},
                      {"detail", c.detail},
                      {"seconds", c.seconds}});
  }
  return {{"backend", r.spec},
          {"origin", describe_spec(r.spec)},
          {"dtypes", r.claimed.to_string()},
          {"passed", r.count(Outcome::passed)},
          {"failed", r.count(Outcome::failed)},
          {"not_claimed", r.count(Outcome::not_claimed)},
          {"ok", r.ok()},
          {"checks", checks}};
}

}  // namespace llama::conformance
