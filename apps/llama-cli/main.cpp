// llama-cli entry point.
#include <iostream>

#include "cli_run.hpp"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  return llama::cli::run_cli({argv + 1, argv + argc}, std::cout, std::cerr);
}
