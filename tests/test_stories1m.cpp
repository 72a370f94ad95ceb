// The trained stories1M model with its own tokenizer tok2048.bin (the quick
// start's default): run.c's streams of parity-stories1M.json on every
// registered backend, through the library and through llama-cli, and the
// story it writes.
#include <catch2/catch.hpp>

#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/registry.hpp"
#include "test_support.hpp"

using namespace llama;

namespace {

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const RegistryEntry& e : BackendRegistry::instance().entries()) {
    if (!e.is_wrapper) names.push_back(e.name);
  }
  return names;
}

}  // namespace

TEST_CASE("stories1M: every backend gives run.c's streams", "[stories1m][parity]") {
  const auto cases = test::load_json(test::reference_path("parity-stories1M.json"));
  REQUIRE(cases.size() == 4);
  const Checkpoint ck = Checkpoint::open(test::model_path("stories1M.bin"));
  const std::vector<std::string> backends = backend_names();
  REQUIRE(backends.size() >= 3);
  for (const std::string& backend : backends) {
    for (const auto& c : cases) {
      INFO(backend << " on " << c["name"].get<std::string>());
      REQUIRE(c["tokenizer"] == "tok2048.bin");
      const test::CaseStream run = test::generate_case(ck, c, backend);
      CHECK(run.stream == c["stream"].get<std::vector<int32_t>>());
      CHECK(run.stopped_at_bos == c["stopped_at_bos"].get<bool>());
    }
  }
}

TEST_CASE("stories1M: llama-cli --format json on every backend", "[stories1m][cli]") {
  const auto cases = test::load_json(test::reference_path("parity-stories1M.json"));
  for (const std::string& backend : backend_names()) {
    for (const auto& c : cases) {
      INFO(backend << " on " << c["name"].get<std::string>());
      const auto r = test::run_llama_cli_case(c, {"-b", backend});
      REQUIRE(r.exit_code == 0);
      const auto j = nlohmann::json::parse(r.out);
      CHECK(test::json_stream(j) == c["stream"].get<std::vector<int32_t>>());
      CHECK(j["stop_reason"] == (c["stopped_at_bos"].get<bool>() ? "bos" : "steps"));
      CHECK(j["backend"] == backend);
    }
  }
}

TEST_CASE("stories1M: greedy decoding writes a story, the same in text and json",
          "[stories1m][cli]") {
  const std::vector<std::string> args = {"-c", test::model_path("stories1M.bin"), "-k",
                                         test::model_path("tok2048.bin")};
  const auto text = test::run_llama_cli(args);
  REQUIRE(text.exit_code == 0);
  std::vector<std::string> json_args = args;
  json_args.insert(json_args.end(), {"--format", "json"});
  const auto json = test::run_llama_cli(json_args);
  REQUIRE(json.exit_code == 0);
  const auto j = nlohmann::json::parse(json.out);
  CHECK(text.out == j["text"].get<std::string>() + "\n");
  // A story of whole words: letters, punctuation and spaces, no byte fallbacks or fragments.
  const std::string story = j["text"].get<std::string>();
  CHECK(story.size() > 400);
  CHECK(story.find("Once upon a time") != std::string::npos);
  for (const char ch : story) {
    const auto c = static_cast<unsigned char>(ch);
    CHECK((c == '\n' || (c >= 0x20 && c < 0x7f)));
  }
}
