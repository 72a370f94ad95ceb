// Where llama-conformance reads its data: the models (../shared/models: checkpoints and
// tokenizer.bin) and the reference cases (../shared/reference: parity.json,
// parity-q8.json), and a scratch directory for the checkpoints it generates.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace llama::conformance {

struct DataDirs {
  std::string models;     // --models, else $LLAMA_MODELS_DIR, else the build's default
  std::string reference;  // --reference, else $LLAMA_REFERENCE_DIR, else the build's default
};

// The dirs given, or the environment's, or the ones the build was configured with.
DataDirs default_data_dirs(const std::string& models_flag, const std::string& reference_flag);

class ConformanceData {
 public:
  // Throws Error naming a directory that does not exist and the flag that sets it.
  explicit ConformanceData(DataDirs dirs);
  ~ConformanceData();
  ConformanceData(const ConformanceData&) = delete;
  ConformanceData& operator=(const ConformanceData&) = delete;

  // A file of the models directory; throws Error naming it when missing.
  std::string model(const std::string& file) const;
  // A JSON file of the reference directory, parsed; throws Error when missing or invalid.
  nlohmann::json cases(const std::string& file) const;
  // A path in this run's scratch directory (removed with this object).
  std::string scratch(const std::string& name) const;

 private:
  DataDirs dirs_;
  std::filesystem::path scratch_;
};

}  // namespace llama::conformance
