// Helpers for the bench tests: running llama-bench and llama-mkmodel as a
// user does (through test_support's run_program) and checking their one-line errors.
#pragma once

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace llama::test {

inline ProcessResult run_bench(const std::vector<std::string>& args) {
  return run_program(LLAMA_BENCH_PATH, args);
}
inline ProcessResult run_mkmodel(const std::vector<std::string>& args) {
  return run_program(LLAMA_MKMODEL_PATH, args);
}

// A failed run: exit `code`, stderr one line starting "<program>: " and naming `needle`.
void check_one_line_error(const ProcessResult& r, const std::string& program, int code,
                          const std::string& needle);

}  // namespace llama::test
