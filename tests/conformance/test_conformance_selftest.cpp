// The conformance suite's own tests: every registered backend has a suite, and
// each check fails on a backend with the fault it is meant to catch (the
// faulty wrappers of faulty_wrappers.cpp) while passing on blas.
#include <catch2/catch.hpp>
#include <sstream>

#include "conformance_checks.hpp"
#include "conformance_data.hpp"
#include "conformance_shapes.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/registry.hpp"
#include "test_support.hpp"

using namespace llama;
using namespace llama::conformance;
using Catch::Matchers::Contains;

namespace {

const ConformanceData& data() {
  static const ConformanceData d({LLAMA_MODELS_DIR, LLAMA_REFERENCE_DIR});
  return d;
}

}  // namespace

TEST_CASE("every registered backend has a conformance suite", "[conformance-selftest]") {
  std::istringstream in(LLAMA_CONFORMANCE_BACKENDS);  // specs given to llama_add_conformance
  std::vector<std::string> covered;
  for (std::string spec; std::getline(in, spec, ',');) covered.push_back(spec);
  for (const std::string& name : BackendRegistry::instance().backend_names()) {
    if (name.starts_with("test-")) continue;  // registered by a test for its own use
    INFO("backend '" << name << "' has no suite: add llama_add_conformance(" << name
                     << ") to tests/conformance/CMakeLists.txt");
    CHECK(std::find(covered.begin(), covered.end(), name) != covered.end());
  }
}

TEST_CASE("a backend with noise on one logit fails the reference checks",
          "[conformance-selftest]") {
  for (const char* file : {"stories260K.bin", "rand-gqa.bin", "mini32k.bin"}) {
    INFO(file);
    const Checkpoint ck = Checkpoint::open(test::model_path(file));
    const auto tokens = test_tokens(ck.config(), 8);
    const CheckResult noisy = check_logits_match_reference("test-noisy:blas", ck.model(), tokens);
    CHECK_FALSE(noisy.ok);
    CHECK_THAT(noisy.failure,
               Contains("position 0: relative difference") &&
                   Contains("at token " + std::to_string(ck.config().vocab_size / 2)));
    CHECK(check_logits_match_reference("blas", ck.model(), tokens).ok);
    // The noise is consistent, so the checks of self-consistency still pass.
    CHECK(check_batch_matches_sequential("test-noisy:blas", ck.model()).ok);
  }
  for (const Shape& shape : generated_shapes()) {
    INFO(shape.name);
    const Checkpoint ck = Checkpoint::open(write_random_checkpoint(data(), shape, 7));
    CHECK_FALSE(
        check_logits_match_reference("test-noisy:blas", ck.model(), test_tokens(ck.config(), 4))
            .ok);
  }
}

TEST_CASE("each conformance check catches its fault", "[conformance-selftest]") {
  const Checkpoint s260 = Checkpoint::open(test::model_path("stories260K.bin"));
  const Checkpoint gqa = Checkpoint::open(test::model_path("rand-gqa.bin"));
  const Checkpoint small =
      Checkpoint::open(write_random_checkpoint(data(), generated_shapes()[0], 7));
  const Model& m = s260.model();

  CHECK(check_threads_agree("blas", m).ok);
  const auto threads = check_threads_agree("test-noisy-2-threads:blas", m);
  CHECK_THAT(threads.failure, Contains("2 threads against 1"));

  CHECK(check_prepare_twice("blas", m, gqa.model()).ok);
  const auto twice = check_prepare_twice("test-noisy-after-reprepare:blas", m, gqa.model());
  CHECK_THAT(twice.failure, Contains("second prepare, same model"));

  CHECK(check_batch_matches_sequential("blas", m).ok);
  const auto batch = check_batch_matches_sequential("test-batch-last-only:blas", m);
  CHECK_THAT(batch.failure, Contains("forward_batch all_logits") && Contains("logits, expected"));

  // A backend that counts positions itself runs the rewound tokens at 16, 17, ...
  for (const Model* model : {&m, &gqa.model()}) {
    INFO(model->source);
    CHECK(check_rewind("blas", *model).ok);
    CHECK_THAT(check_rewind("test-ignores-rewind:blas", *model).failure,
               Contains("forward back at position 8 after 16 positions of other tokens: position "
                        "8: relative difference"));
  }
  CHECK(check_rewind("blas", small.model()).ok);  // seq_len 16: past it, an error
  CHECK_THAT(check_rewind("test-ignores-rewind:blas", small.model()).failure, Contains("threw: "));

  CHECK(check_seq_len_bound("blas", small.model()).ok);
  const auto bound = check_seq_len_bound("test-no-seq-len-bound:blas", small.model());
  CHECK_THAT(bound.failure, Contains("forward at seq_len: no error"));

  const auto cases = test::load_json(test::reference_path("parity.json"));
  const auto& greedy = cases.at(0);  // s260-greedy
  REQUIRE(greedy["temperature"].get<double>() == 0.0);
  CHECK(check_reference_stream(data(), "blas", greedy).ok);
  const auto stream = check_reference_stream(data(), "test-derailed:blas", greedy);
  CHECK_THAT(stream.failure, Contains("s260-greedy: stream departs from the recorded one at "
                                      "position 11"));

  CHECK(check_upcast_exact("blas", m, DType::bf16).ok);
  CHECK(check_upcast_exact("blas", m, DType::f16).ok);
  CHECK_THAT(check_upcast_exact("test-noisy-on-16-bit:blas", m, DType::bf16).failure,
             Contains("in bf16 against the f32 model of the same values: position 0"));

  // The same check on an int8 case (parity-q8.json, runq.c's stream).
  const auto q8_cases = test::load_json(test::reference_path("parity-q8.json"));
  const auto& q8_greedy = q8_cases.at(0);  // q8-gqa-greedy
  REQUIRE(q8_greedy["temperature"].get<double>() == 0.0);
  CHECK(check_reference_stream(data(), "blas", q8_greedy).ok);
  const auto q8_stream = check_reference_stream(data(), "test-derailed:blas", q8_greedy);
  CHECK_THAT(q8_stream.failure, Contains("q8-gqa-greedy: stream departs from the recorded one at "
                                         "position 11"));
}

TEST_CASE("each many-sequence check catches its fault", "[conformance-selftest][sequences]") {
  const Checkpoint s260 = Checkpoint::open(data().model("stories260K.bin"));
  const Model& m = s260.model();
  CHECK(check_sequences_match_alone("blas", m).ok);
  CHECK(check_sequences_match_alone("reference", m).ok);
  const auto shared = check_sequences_match_alone("test-shared-cache:reference", m);
  CHECK_THAT(shared.failure, Contains("mixed call: sequence "));
  CHECK(check_sequence_rewind("graph", m).ok);
  CHECK_THAT(check_sequence_rewind("test-shared-cache:reference", m).failure,
             Contains("after sequence 1 went back to position 3"));
  CHECK(check_batch_invariant("reference", m).ok);
  // The wrapper moves a row's last bit when other runs share its call.
  CHECK_THAT(check_batch_invariant("test-claims-invariant:blas", m).failure,
             Contains("not bit-identical to the sequence run alone"));
  CHECK(check_sequence_bad_calls("graph", m).ok);
  CHECK_THAT(check_sequence_bad_calls("test-unchecked-runs:reference", m).failure,
             Contains(": no error"));
  CHECK(check_sequence_memory("reference").ok);
}

TEST_CASE("llama-conformance reports each failing check and exits 1 on a broken backend",
          "[conformance-selftest]") {
  const std::string faults = LLAMA_TEST_FAULTS_PLUGIN;
  auto conformance = [&](std::vector<std::string> args) {
    args.insert(args.end(), {"--plugin", faults, "--models", LLAMA_MODELS_DIR, "--reference",
                             LLAMA_REFERENCE_DIR});
    return test::run_program(LLAMA_CONFORMANCE_PATH, args);
  };
  const auto noisy = conformance(
      {"-b", "test-noisy:blas", "--check", "f32/logits-shared", "--check", "f32/batch"});
  INFO(noisy.out << noisy.err);
  CHECK(noisy.exit_code == 1);
  CHECK_THAT(noisy.out, Contains("backend test-noisy:blas (test-noisy from plugin test-faults, "));
  CHECK_THAT(noisy.out, Contains("FAIL") && Contains("f32/logits-shared") &&
                            Contains("stories260K.bin: test-noisy:blas against reference on ") &&
                            Contains("position 0: relative difference"));
  CHECK_THAT(noisy.out, Contains("PASS") && Contains("f32/batch"));  // the noise is consistent
  CHECK_THAT(noisy.out,
             Contains("test-noisy:blas: 1 passed, 1 failed, 0 not claimed: DOES NOT CONFORM\n"));

  const auto derailed = conformance({"-b", "blas,test-derailed:blas", "--check", "f32/streams",
                                     "--check", "q8_0/streams", "--format", "json"});
  CHECK(derailed.exit_code == 1);
  const auto j = nlohmann::json::parse(derailed.out);
  CHECK(j["ok"] == false);
  REQUIRE(j["backends"].size() == 2);
  CHECK(j["backends"][0]["ok"] == true);
  CHECK(j["backends"][0]["passed"] == 2);
  const auto& bad = j["backends"][1];
  CHECK(bad["failed"] == 2);
  CHECK_THAT(bad["checks"][0]["detail"].get<std::string>(),
             Contains("s260-greedy: stream departs from the recorded one at position 11"));
  CHECK_THAT(bad["checks"][1]["detail"].get<std::string>(),
             Contains("q8-gqa-greedy: stream departs from the recorded one at position 11"));

  // A backend that claims f32 only: its Q8_0 checks are not claimed, never passed, and it
  // must refuse the Q8_0 model; one that claims f32 only yet prepares Q8_0 fails.
  const auto f32_only =
      conformance({"-b", "test-f32-only:blas", "--check", "unclaimed-refused", "--check",
                   "f32/streams", "--check", "q8_0/streams", "--check", "q8_0/logits"});
  INFO(f32_only.out << f32_only.err);
  CHECK(f32_only.exit_code == 0);
  CHECK_THAT(f32_only.out, Contains("backend test-f32-only:blas (") && Contains("), runs f32\n"));
  CHECK_THAT(f32_only.out, Contains("NOT CLAIMED q8_0/streams") &&
                               Contains("test-f32-only:blas runs f32, not q8_0"));
  CHECK_THAT(f32_only.out,
             Contains("test-f32-only:blas: 2 passed, 0 failed, 2 not claimed: conforms\n"));
  const auto accepts = conformance({"-b", "test-accepts-unclaimed:blas", "--check",
                                    "unclaimed-refused", "--check", "q8_0/streams"});
  CHECK(accepts.exit_code == 1);
  CHECK_THAT(accepts.out, Contains("FAIL") && Contains("unclaimed-refused") &&
                              Contains("q-gqa.v2.bin (f32, q8_0): prepare accepted a model "
                                       "holding q8_0, which the backend does not claim"));
  CHECK_THAT(accepts.out, Contains("0 passed, 1 failed, 1 not claimed: DOES NOT CONFORM\n"));
  // GGUF's block types are among the models (llama.cpp's files, read in place):
  // test-f32-only refused them above; one claiming none of them that prepares
  // them anyway fails on the first.
  const auto blocks =
      conformance({"-b", "test-accepts-gguf-blocks:blas", "--check", "unclaimed-refused"});
  CHECK(blocks.exit_code == 1);
  CHECK_THAT(blocks.out, Contains("FAIL") && Contains("stories1M.q8_0.gguf (f32, block_q8_0): "
                                                      "prepare accepted a model holding "
                                                      "block_q8_0, which the backend does not "
                                                      "claim"));

  const auto good = conformance({"-b", "blas", "--check", "registered"});
  CHECK(good.exit_code == 0);
  CHECK_THAT(good.out, Contains("blas: 1 passed, 0 failed, 0 not claimed: conforms\n"));

  // Bad usage is exit 2 with one line; a missing data directory exit 1.
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"-b", "nope"}, {"-b", "blas", "--check", "f32/nope"}, {"--check", "registered"}}) {
    const auto r = conformance(args);
    CHECK(r.exit_code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  const auto missing =
      test::run_program(LLAMA_CONFORMANCE_PATH, {"-b", "blas", "--models", "/nonexistent-models"});
  CHECK(missing.exit_code == 1);
  CHECK(missing.err ==
        "llama-conformance: --models: /nonexistent-models: no such directory (give --models DIR "
        "or set LLAMA_MODELS_DIR)\n");
}
