// llama-bench entry point.
#include <iostream>

#include "bench_run.hpp"

int main(int argc, char** argv) {
  return llama::bench::run_bench({argv + 1, argv + argc}, std::cout, std::cerr);
}
