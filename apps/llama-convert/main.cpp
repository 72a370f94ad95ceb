// llama-convert entry point.
#include <iostream>

#include "convert_run.hpp"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  return llama::convert::run_convert({argv + 1, argv + argc}, std::cout, std::cerr);
}
