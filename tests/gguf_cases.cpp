// Splits gguf-parity.json into the cases this build runs and those whose
// tensor types it refuses (gguf_cases.hpp).
#include "gguf_cases.hpp"

#include <catch2/catch.hpp>
#include <iostream>
#include <string>

#include "llama/formats/gguf_file.hpp"
#include "llama/formats/gguf_llama.hpp"
#include "llama/formats/gguf_model.hpp"
#include "llama/formats/gguf_types.hpp"
#include "test_support.hpp"

namespace llama::test {

nlohmann::json runnable_gguf_cases(size_t at_least) {
  const auto cases = load_json(reference_path("gguf-parity.json"));
  nlohmann::json runnable = nlohmann::json::array();
  for (const auto& c : cases) {
    const std::string path = model_path(c["model"].get<std::string>());
    std::string unsupported;
    const gguf::File file = gguf::File::open(path);
    for (const gguf::Tensor& t : file.tensors()) {
      if (!gguf::supported_type(t.type)) {
        unsupported = gguf::type_name(t.type);
        break;
      }
    }
    if (unsupported.empty()) {
      runnable.push_back(c);
      continue;
    }
    INFO(path);
    CHECK_THROWS_WITH(gguf::open_model(path),
                      Catch::Contains("has type " + unsupported + ", which is not supported"));
    std::cout << "gguf cases: " << c["model"].get<std::string>() << " holds " << unsupported
              << " tensors, which this build does not run (supported: " << gguf::supported_types()
              << "): checked as a refusal, not for parity\n";
  }
  INFO("gguf-parity.json: " << runnable.size() << " of " << cases.size() << " cases runnable");
  REQUIRE(runnable.size() >= at_least);
  return runnable;
}

}  // namespace llama::test
