// Checks shared by the bench tests.
#include "test_bench_support.hpp"

#include <algorithm>

namespace llama::test {

void check_one_line_error(const ProcessResult& r, const std::string& program, int code,
                          const std::string& needle) {
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == code);
  CHECK_THAT(r.err,
             Catch::Matchers::StartsWith(program + ": ") && Catch::Matchers::Contains(needle));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

}  // namespace llama::test
