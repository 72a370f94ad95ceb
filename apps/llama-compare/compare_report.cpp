// llama-compare's output formats.
#include "compare_report.hpp"

#include <nlohmann/json.hpp>

namespace llama::compare {

void write_text(const Comparison& c, double tolerance, uint64_t seed, std::ostream& out) {
  out << "baseline " << c.baseline << ": " << c.stream.size() << " tokens (" << c.prompt_tokens
      << " prompt), " << c.positions << " positions compared, stop " << to_string(c.stop_reason)
      << ", seed " << seed << ", tolerance " << tolerance << "\n";
  for (const BackendComparison& b : c.backends) {
    out << b.backend << ": max abs diff " << b.max_abs;
    if (b.max_abs_position >= 0) {
      out << " (position " << b.max_abs_position << ", token " << b.max_abs_token << ")";
    }
    out << ", max rel diff " << b.max_rel;
    if (b.max_rel_position >= 0) out << " (position " << b.max_rel_position << ")";
    out << ", argmax differs at " << b.argmax_mismatches << " of " << c.positions << " positions, ";
    if (b.first_divergence) {
      out << "free-running stream diverges at position " << *b.first_divergence;
    } else {
      out << "free-running stream identical";
    }
    out << (b.ok(tolerance) ? "  OK\n" : "  FAIL\n");
  }
  out << (c.ok(tolerance) ? "all backends agree with " : "some backends differ from ") << c.baseline
      << "\n";
}

void write_json(const Comparison& c, double tolerance, uint64_t seed, std::ostream& out) {
  nlohmann::json backends = nlohmann::json::array();
  for (const BackendComparison& b : c.backends) {
    backends.push_back(
        {{"backend", b.backend},
         {"max_abs_diff", b.max_abs},
         {"max_abs_position", b.max_abs_position},
         {"max_abs_token", b.max_abs_token},
         {"max_rel_diff", b.max_rel},
         {"max_rel_position", b.max_rel_position},
         {"argmax_mismatches", b.argmax_mismatches},
         {"first_divergence",
          b.first_divergence ? nlohmann::json(*b.first_divergence) : nlohmann::json(nullptr)},
         {"stream", b.stream},
         {"ok", b.ok(tolerance)}});
  }
  const nlohmann::json j{{"baseline", c.baseline},
                         {"stream", c.stream},
                         {"prompt_tokens", c.prompt_tokens},
                         {"positions", c.positions},
                         {"stop_reason", to_string(c.stop_reason)},
                         {"seed", seed},
                         {"tolerance", tolerance},
                         {"backends", backends},
                         {"ok", c.ok(tolerance)}};
  out << j.dump() << "\n";
}

}  // namespace llama::compare
