// Data directories, reference cases and the scratch directory of a conformance run.
#include "conformance_data.hpp"

#include <unistd.h>

#include <cstdlib>

#include "llama/error.hpp"
#include "llama/mapped_file.hpp"

namespace fs = std::filesystem;

namespace llama::conformance {
namespace {

// The reference cases are the project's own JSON files of tens of KB; 64 MiB is
// room for suites thousands of times larger, and no more is read.
constexpr int64_t kMaxReferenceBytes = int64_t{64} << 20;

std::string pick(const std::string& flag, const char* env, const char* built_in) {
  if (!flag.empty()) return flag;
  const char* value = std::getenv(env);
  if (value != nullptr && *value != '\0') return value;
  return built_in;
}

void require_directory(const std::string& dir, const char* flag, const char* env) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw Error(std::string(flag) + ": " + dir + ": no such directory (give " + flag +
                " DIR or set " + env + ")");
  }
}

}  // namespace

DataDirs default_data_dirs(const std::string& models_flag, const std::string& reference_flag) {
  return {pick(models_flag, "LLAMA_MODELS_DIR", LLAMA_DEFAULT_MODELS_DIR),
          pick(reference_flag, "LLAMA_REFERENCE_DIR", LLAMA_DEFAULT_REFERENCE_DIR)};
}

ConformanceData::ConformanceData(DataDirs dirs) : dirs_(std::move(dirs)) {
  require_directory(dirs_.models, "--models", "LLAMA_MODELS_DIR");
  require_directory(dirs_.reference, "--reference", "LLAMA_REFERENCE_DIR");
  scratch_ = fs::temp_directory_path() / ("llama-conformance-" + std::to_string(::getpid()));
  fs::create_directories(scratch_);
}

ConformanceData::~ConformanceData() {
  std::error_code ec;
  fs::remove_all(scratch_, ec);
}

std::string ConformanceData::model(const std::string& file) const {
  const fs::path p = fs::path(dirs_.models) / file;
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) throw Error(p.string() + ": model file not found");
  return p.string();
}

nlohmann::json ConformanceData::cases(const std::string& file) const {
  const fs::path p = fs::path(dirs_.reference) / file;
  const std::string text = read_text_file(p.string(), kMaxReferenceBytes, "a reference file");
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(p.string() + ": not valid JSON: " + e.what());
  }
}

std::string ConformanceData::scratch(const std::string& name) const {
  return (scratch_ / name).string();
}

}  // namespace llama::conformance
