// Runs this executable again as a child process and captures its stdout, so
// each benchmark configuration gets a fresh address space.
#pragma once

#include <string>
#include <vector>

namespace llama::bench {

struct ChildOutput {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;      // the signal that killed it, else 0
  std::string out;     // its stdout; its stderr goes to ours
};

// Spawns /proc/self/exe with `args` and waits for it; throws Error when it
// cannot be started.
ChildOutput run_self(const std::vector<std::string>& args);

}  // namespace llama::bench
