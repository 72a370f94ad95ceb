// llama-template entry point.
#include <iostream>

#include "template_run.hpp"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  return llama::chat_app::run_template({argv + 1, argv + argc}, std::cout, std::cerr);
}
