// llama-conformance entry point.
#include <iostream>

#include "conformance_run.hpp"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  return llama::conformance::run_conformance({argv + 1, argv + argc}, std::cout, std::cerr);
}
