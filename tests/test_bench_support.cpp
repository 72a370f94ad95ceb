// Process running for the bench tests (std::system with redirected output).
#include "test_bench_support.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace llama::test {
namespace {

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'')
      q.append("'\\''");
    else
      q.push_back(c);
  }
  q.push_back('\'');
  return q;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

ProcessResult run_program(const std::string& program, const std::vector<std::string>& args) {
  const std::string out_path = temp_path("bench-out");
  const std::string err_path = temp_path("bench-err");
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on chained operator+.
  std::string cmd = shell_quote(program);
  for (const std::string& a : args) cmd.append(" ").append(shell_quote(a));
  cmd.append(" >").append(shell_quote(out_path));
  cmd.append(" 2>").append(shell_quote(err_path));
  cmd.append(" </dev/null");
  const int status = std::system(cmd.c_str());
  ProcessResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  return r;
}

void check_one_line_error(const ProcessResult& r, const std::string& program, int code,
                          const std::string& needle) {
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == code);
  CHECK_THAT(r.err,
             Catch::Matchers::StartsWith(program + ": ") && Catch::Matchers::Contains(needle));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

}  // namespace llama::test
