// Plugins: a good plugin's backends and wrappers join the registry with their origin
// and run; each deliberately broken plugin (tests/plugins/) is refused with one line
// naming the file and the reason, in process (llama::load_plugin) and by every app
// that takes -b (exit 1); LLAMA_PLUGIN_PATH loads a directory.
#include <catch2/catch.hpp>
#include <filesystem>

#include "llama/error.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/plugins/loader.hpp"
#include "llama/plugins/plugin.hpp"
#include "llama/registry.hpp"
#include "test_support.hpp"

using namespace llama;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
namespace fs = std::filesystem;

namespace {

const std::string kGood =
    std::string(LLAMA_TEST_PLUGINS_DIR) + "/good/libllama-plugin-test-good.so";

std::string broken(const std::string& fault) {
  return std::string(LLAMA_TEST_PLUGINS_DIR) + "/broken/libllama-plugin-test-" + fault + ".so";
}

std::vector<std::string> registry_names() {
  std::vector<std::string> names;
  for (const RegistryEntry& e : BackendRegistry::instance().entries()) names.push_back(e.name);
  return names;
}

// A file that is not a shared library, named like a plugin.
std::string text_file() {
  const std::string path = test::temp_path("libllama-plugin-text.so");
  test::write_file(path, std::vector<std::byte>(64, std::byte{'x'}));
  return path;
}

struct Refusal {
  std::string file;
  std::vector<std::string> reasons;  // each must appear in the message
};

// Every refusal, the good plugin loaded first (two of them are about its names).
std::vector<Refusal> refusals() {
  const std::string copy = test::temp_path("libllama-plugin-copy-of-good.so");
  fs::copy_file(kGood, copy, fs::copy_options::overwrite_existing);
  const std::string good = fs::canonical(kGood).string();
  return {
      {broken("missing"), {"no such file"}},
      {LLAMA_TEST_PLUGINS_DIR, {"is a directory, not a shared library"}},
      {text_file(), {"not a shared library (no ELF header)"}},
      {LLAMA_CLI_PATH, {"cannot load: ", "position-independent executable"}},
      {broken("undefined_symbol"), {"cannot load: ", "llama_test_symbol_nobody_defines"}},
      {broken("no_entry"), {"no llama_plugin_entry symbol: not a llama-backends plugin"}},
      {broken("protocol"),
       {"built for plugin protocol " + std::to_string(LLAMA_PLUGIN_PROTOCOL - 1) +
        ", this program speaks protocol " + std::to_string(LLAMA_PLUGIN_PROTOCOL)}},
      {broken("toolchain"),
       {"built for Itanium C++ ABI, libc++ (ABI 1), this program for Itanium C++ ABI, libstdc++",
        "an incompatible compiler or standard library"}},
      {broken("second_core"), {"loads a second llama-backends core (", "libllama-core.so.0.1)"}},
      {broken("throws"), {"threw while registering: cannot find its weights"}},
      {broken("throws_int"), {"threw while registering (not a std::exception)"}},
      {broken("name_taken"), {"backend name 'blas' is already registered (built in)"}},
      {broken("static_name_taken"), {"backend name 'reference' is already registered (built in)"}},
      {broken("taken_by_plugin"),
       {"backend name 'test-plugin-reference' is already registered (by plugin " + good + ")"}},
      {broken("malformed_name"), {"backend name 'test:broken' must be non-empty without ':'"}},
      {broken("twice"), {"registers 'test-broken' twice"}},
      {copy, {"plugin name 'test-good' is already taken by " + good}},
  };
}

std::vector<float> logits(const std::string& spec, const Model& model, int positions) {
  auto b = BackendRegistry::instance().create(spec);
  b->prepare(model);
  std::vector<float> all;
  for (int pos = 0; pos < positions; ++pos) {
    const auto l = b->forward((pos * 37 + 1) % model.config.vocab_size, pos);
    all.insert(all.end(), l.begin(), l.end());
  }
  return all;
}

}  // namespace

TEST_CASE("a plugin's backends and wrappers join the registry, marked with its file", "[plugins]") {
  const LoadedPlugin p = load_plugin(kGood);
  CHECK(p.name == "test-good");
  CHECK(p.file == fs::canonical(kGood).string());
  // The static registrar's backend is captured as the plugin's, in registration order.
  CHECK(p.backends == std::vector<std::string>{"test-plugin-static", "test-plugin-reference"});
  CHECK(p.wrappers == std::vector<std::string>{"test-plugin-wrapper"});
  for (const RegistryEntry& e : BackendRegistry::instance().entries()) {
    INFO(e.name);
    const bool from_plugin = e.name.rfind("test-plugin-", 0) == 0;
    CHECK(e.origin == (from_plugin ? p.file : ""));
  }

  const Checkpoint ck = Checkpoint::open(test::model_path("stories260K.bin"));
  const auto want = logits("reference", ck.model(), 6);
  CHECK(logits("test-plugin-reference", ck.model(), 6) == want);
  CHECK(logits("test-plugin-static", ck.model(), 6) == want);
  CHECK(logits("test-plugin-wrapper:reference", ck.model(), 6) == want);
  auto wrapped = BackendRegistry::instance().create("test-plugin-wrapper:test-plugin-reference");
  CHECK(wrapped->name() == "test-plugin-wrapper:test-plugin-reference");

  // Loading the same file again, under another path too, is loading it once.
  const auto before = registry_names();
  CHECK(load_plugin(kGood).backends == p.backends);
  CHECK(load_plugin(std::string(LLAMA_TEST_PLUGINS_DIR) + "/good/../good/" +
                    fs::path(kGood).filename().string())
            .file == p.file);
  CHECK(registry_names() == before);
  CHECK(BackendRegistry::instance().plugins().size() == 1);
}

TEST_CASE("each broken plugin is refused with one line naming the file and the reason",
          "[plugins][bad-input]") {
  load_plugin(kGood);
  for (const Refusal& r : refusals()) {
    INFO(r.file);
    const auto before = registry_names();
    std::string message;
    try {
      load_plugin(r.file);
    } catch (const Error& e) {
      message = e.what();
    }
    CHECK_THAT(message, StartsWith("plugin " + r.file + ": "));
    for (const std::string& reason : r.reasons) CHECK_THAT(message, Contains(reason));
    CHECK(message.find('\n') == std::string::npos);
    CHECK(registry_names() == before);  // nothing of a refused plugin stays registered
  }
  CHECK_FALSE(BackendRegistry::instance().contains("test-broken"));
}

TEST_CASE("every app that takes -b refuses each broken plugin with one line and exit 1",
          "[plugins][bad-input]") {
  load_plugin(kGood);  // refusals() names it in two reasons
  const std::vector<std::pair<std::string, std::string>> apps = {
      {"llama-cli", LLAMA_CLI_PATH},
      {"llama-compare", LLAMA_COMPARE_PATH},
      {"llama-bench", LLAMA_BENCH_PATH},
      {"llama-conformance", LLAMA_CONFORMANCE_PATH},
  };
  for (const Refusal& r : refusals()) {
    for (const auto& [name, path] : apps) {
      INFO(name << " --plugin " << r.file);
      // The two name clashes with the good plugin need it loaded first.
      const auto p =
          test::run_program(path, {"--plugin", kGood, "--plugin", r.file, "--list-backends"});
      CHECK(p.exit_code == 1);
      CHECK(p.out.empty());
      CHECK_THAT(p.err, StartsWith(name + ": plugin " + r.file + ": "));
      for (const std::string& reason : r.reasons) CHECK_THAT(p.err, Contains(reason));
      CHECK(std::count(p.err.begin(), p.err.end(), '\n') == 1);
    }
  }
}

TEST_CASE("a plugin reaches every app through --plugin and LLAMA_PLUGIN_PATH", "[plugins]") {
  const std::string good_dir = std::string(LLAMA_TEST_PLUGINS_DIR) + "/good";
  const std::string file = fs::canonical(kGood).string();
  const auto env_cli = [&](const std::string& path, std::vector<std::string> args) {
    args.insert(args.begin(), {"LLAMA_PLUGIN_PATH=" + path, LLAMA_CLI_PATH});
    return test::run_program("/usr/bin/env", args);
  };
  for (const auto& listed : {test::run_llama_cli({"--plugin", kGood, "--list-backends"}),
                             env_cli("::" + good_dir + ":", {"--list-backends"}),
                             env_cli(good_dir, {"--plugin", kGood, "--list-backends"})}) {
    INFO(listed.err);
    CHECK(listed.exit_code == 0);
    CHECK_THAT(listed.out, Contains("backend test-plugin-reference\tplugin test-good (" + file +
                                    ")\tthe reference backend, from a plugin\n"));
    CHECK_THAT(listed.out, Contains("wrapper test-plugin-wrapper\tplugin test-good (" + file));
    CHECK_THAT(listed.out, Contains("backend blas\tbuilt in\t"));
  }
  const auto missing = env_cli(good_dir + ":/nonexistent-plugins", {"--list-backends"});
  CHECK(missing.exit_code == 1);
  CHECK(missing.err == "llama-cli: LLAMA_PLUGIN_PATH: /nonexistent-plugins: no such directory\n");

  // Generation through the plugin's backend gives the reference backend's tokens.
  const std::vector<std::string> run = {"-c",       test::model_path("mini32k.bin"),
                                        "-k",       test::model_path("tokenizer.bin"),
                                        "-p",       "Once upon",
                                        "-s",       "12",
                                        "--format", "json"};
  auto with = [&](std::vector<std::string> extra) {
    extra.insert(extra.begin(), run.begin(), run.end());
    return extra;
  };
  const auto ref = test::run_llama_cli(with({"-b", "reference"}));
  const auto plugged = env_cli(good_dir, with({"-b", "test-plugin-wrapper:test-plugin-reference"}));
  REQUIRE(ref.exit_code == 0);
  REQUIRE(plugged.exit_code == 0);
  CHECK(nlohmann::json::parse(plugged.out)["generated_tokens"] ==
        nlohmann::json::parse(ref.out)["generated_tokens"]);
  CHECK_THAT(plugged.err, Contains("test-plugin-wrapper:test-plugin-reference: 12 forward calls"));

  const auto compared = test::run_program(
      LLAMA_COMPARE_PATH,
      {"--plugin", kGood, "-c", test::model_path("stories260K.bin"), "-k",
       test::model_path("tokenizer.bin"), "-b", "reference,test-plugin-reference", "-s", "20"});
  INFO(compared.err);
  CHECK(compared.exit_code == 0);
  CHECK_THAT(compared.out, Contains("test-plugin-reference: max abs diff 0, "));

  // llama-bench hands the plugin to the child process that runs each configuration.
  const auto bench = test::run_program(LLAMA_BENCH_PATH, {"--plugin",
                                                          kGood,
                                                          "-c",
                                                          test::model_path("stories260K.bin"),
                                                          "-b",
                                                          "test-plugin-reference",
                                                          "-p",
                                                          "4",
                                                          "-n",
                                                          "4",
                                                          "-r",
                                                          "1",
                                                          "--warmup",
                                                          "0",
                                                          "--bandwidth-mib",
                                                          "16",
                                                          "--sgemm-n",
                                                          "128",
                                                          "--format",
                                                          "json"});
  INFO(bench.err);
  REQUIRE(bench.exit_code == 0);
  CHECK(nlohmann::json::parse(bench.out)["results"][0]["status"] == "ok");
}
