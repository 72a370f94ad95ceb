// llama-compare entry point.
#include <iostream>

#include "compare_run.hpp"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  return llama::compare::run_compare({argv + 1, argv + argc}, std::cout, std::cerr);
}
