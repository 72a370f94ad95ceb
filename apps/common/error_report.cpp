// One-line error reporting shared by the apps.
#include "error_report.hpp"

#include <filesystem>
#include <new>

#include "llama/error.hpp"

namespace llama::cli {

std::string one_line(std::string_view message) {
  std::string s;
  for (const char ch : message) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      s += "\\x";
      s += "0123456789ABCDEF"[c >> 4];
      s += "0123456789ABCDEF"[c & 15];
    } else {
      s += ch;
    }
  }
  return s;
}

int report_usage_error(std::string_view program, std::ostream& err, std::string_view why) {
  err << program << ": " << one_line(why) << " (see --help)\n";
  return 2;
}

int run_reporting_errors(std::string_view program, std::ostream& err,
                         const std::function<int()>& action) {
  try {
    return action();
  } catch (const Error& e) {
    err << program << ": " << one_line(e.what()) << "\n";
  } catch (const std::filesystem::filesystem_error& e) {
    err << program << ": " << one_line(e.what()) << "\n";
  } catch (const std::bad_alloc&) {
    err << program << ": out of memory\n";
  } catch (const std::exception& e) {
    err << program << ": internal error: " << one_line(e.what()) << "\n";
  }
  return 1;
}

}  // namespace llama::cli
