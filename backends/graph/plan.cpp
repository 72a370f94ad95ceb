// Plan lookups and its textual form for --explain.
#include "plan.hpp"

#include <iomanip>
#include <sstream>

#include "llama/error.hpp"

namespace llama::graph {
namespace {

const Binding& find(const std::vector<Binding>& list, const std::string& name, const char* kind) {
  for (const Binding& b : list) {
    if (b.name == name) return b;
  }
  throw Error(std::string("graph plan: no ") + kind + " named " + name);
}

}  // namespace

const Binding& Plan::input(const std::string& name) const { return find(inputs, name, "input"); }
const Binding& Plan::output(const std::string& name) const { return find(outputs, name, "output"); }

std::string Plan::describe(const std::string& title) const {
  std::ostringstream s;
  s << title << " (" << instructions.size() << " instructions, " << tokens << " token(s))\n";
  size_t width = 0;
  for (const std::string& line : ssa) width = std::max(width, line.size());
  for (size_t i = 0; i < ssa.size(); ++i) {
    const ValueLayout& v = values[i];
    s << "    " << std::left << std::setw(static_cast<int>(width)) << ssa[i] << std::right << "  @"
      << std::setw(7) << v.offset_bytes << "  " << std::setw(7) << v.bytes << " B  live ["
      << v.first << ", " << v.last << "]";
    if (v.view) s << "  view of %" << v.root;
    s << "\n";
  }
  for (const Binding& o : outputs) s << "    output " << o.name << " = %" << o.value << "\n";
  s << "    arena " << arena_bytes << " B for " << value_bytes << " B of values";
  if (value_bytes > 0) {
    s << " (" << std::fixed << std::setprecision(2)
      << static_cast<double>(arena_bytes) / static_cast<double>(value_bytes) << "x)";
  }
  s << "\n";
  return s.str();
}

}  // namespace llama::graph
