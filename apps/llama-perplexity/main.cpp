// llama-perplexity entry point.
#include <unistd.h>

#include <iostream>

#include "perplexity_run.hpp"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  return llama::perplexity_app::run_perplexity({argv + 1, argv + argc}, std::cout, std::cerr,
                                               isatty(STDERR_FILENO) != 0);
}
