// The conformance suite: every check of conformance_checks.hpp, required to
// pass on the backend this executable was built for (backend_under_test), on
// fp32 and Q8_0 checkpoints.
#include <algorithm>
#include <catch2/catch.hpp>

#include "conformance_backend.hpp"
#include "conformance_checks.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/legacy_weights.hpp"
#include "llama/registry.hpp"
#include "test_models.hpp"
#include "test_support.hpp"

using namespace llama;
using namespace llama::conformance;

namespace {

const char* const kSharedModels[] = {"stories260K.bin", "rand-gqa.bin", "mini32k.bin"};

void require_pass(const CheckResult& r) {
  INFO(r.failure);
  CHECK(r.ok);
}

Checkpoint open_shape(const Shape& shape) {
  return Checkpoint::open(write_random_checkpoint(shape, 1234));
}

}  // namespace

TEST_CASE("the backend is registered", "[conformance]") {
  const std::string spec = backend_under_test();
  INFO("backend " << spec);
  REQUIRE_NOTHROW(BackendRegistry::instance().create(spec));
}

TEST_CASE("logits match the reference backend on the shared models", "[conformance]") {
  for (const char* file : kSharedModels) {
    INFO(backend_under_test() << " on " << file);
    const Checkpoint ck = Checkpoint::open(test::model_path(file));
    const int64_t positions = std::min<int64_t>(ck.config().seq_len, 128);
    require_pass(check_logits_match_reference(backend_under_test(), ck.model(),
                                              test_tokens(ck.config(), positions)));
  }
}

TEST_CASE("logits match the reference backend on generated shapes", "[conformance]") {
  for (const Shape& shape : generated_shapes()) {
    INFO(backend_under_test() << " on " << shape.name);
    const Checkpoint ck = open_shape(shape);
    require_pass(check_logits_match_reference(backend_under_test(), ck.model(),
                                              test_tokens(ck.config(), ck.config().seq_len)));
  }
}

TEST_CASE("logits match the reference backend with head_dim and rope variants", "[conformance]") {
  for (const test::NamedConfig& v : test::variant_configs()) {
    INFO(backend_under_test() << " on " << v.name);
    const Model m = test::random_model(v.config, 99, v.name);
    require_pass(check_logits_match_reference(backend_under_test(), m,
                                              test_tokens(m.config, m.config.seq_len)));
  }
}

TEST_CASE("q/k rows laid out for rotate_half give the interleaved model's logits",
          "[conformance]") {
  for (const test::NamedConfig& v : test::variant_configs()) {
    INFO(backend_under_test() << " on " << v.name);
    require_pass(check_rotation_layouts_agree(backend_under_test(),
                                              test::random_model(v.config, 7, v.name)));
  }
}

TEST_CASE("generation reproduces run.c's reference streams token for token", "[conformance]") {
  const auto cases = test::load_json(test::reference_path("parity.json"));
  REQUIRE(cases.size() >= 3);
  for (const auto& c : cases) {
    INFO(backend_under_test() << " on " << c["name"].get<std::string>());
    require_pass(check_reference_stream(backend_under_test(), c));
  }
}

TEST_CASE("generation reproduces run.c's streams of the trained stories1M", "[conformance]") {
  const auto cases = test::load_json(test::reference_path("parity-stories1M.json"));
  REQUIRE(cases.size() >= 3);
  for (const auto& c : cases) {
    INFO(backend_under_test() << " on " << c["name"].get<std::string>());
    require_pass(check_reference_stream(backend_under_test(), c));
  }
}

TEST_CASE("generation reproduces runq.c's int8 reference streams token for token",
          "[conformance]") {
  const auto cases = test::load_json(test::reference_path("parity-q8.json"));
  REQUIRE(!cases.empty());
  for (const auto& c : cases) {
    INFO(backend_under_test() << " on " << c["name"].get<std::string>());
    // The cases must exercise the Q8_0 path, not an fp32 one.
    const Checkpoint ck = Checkpoint::open(test::model_path(c["model"].get<std::string>()));
    REQUIRE(ck.model().legacy_weights.format == WeightFormat::q8_0);
    require_pass(check_reference_stream(backend_under_test(), c));
  }
}

TEST_CASE("prepare again starts over, with the same or another model", "[conformance]") {
  const Checkpoint s260 = Checkpoint::open(test::model_path("stories260K.bin"));
  const Checkpoint gqa = Checkpoint::open(test::model_path("rand-gqa.bin"));
  require_pass(check_prepare_twice(backend_under_test(), s260.model(), gqa.model()));
  const auto shapes = generated_shapes();
  const Checkpoint a = open_shape(shapes.front());
  const Checkpoint b = open_shape(shapes.back());
  require_pass(check_prepare_twice(backend_under_test(), a.model(), b.model()));
}

TEST_CASE("forward_batch equals one forward per position", "[conformance]") {
  for (const char* file : kSharedModels) {
    INFO(backend_under_test() << " on " << file);
    const Checkpoint ck = Checkpoint::open(test::model_path(file));
    require_pass(check_batch_matches_sequential(backend_under_test(), ck.model()));
  }
  for (const Shape& shape : generated_shapes()) {
    INFO(backend_under_test() << " on " << shape.name);
    const Checkpoint ck = open_shape(shape);
    require_pass(check_batch_matches_sequential(backend_under_test(), ck.model()));
  }
}

TEST_CASE("seq_len bounds positions with a clean llama::Error", "[conformance]") {
  for (const Shape& shape : generated_shapes()) {
    INFO(backend_under_test() << " on " << shape.name);
    const Checkpoint ck = open_shape(shape);
    require_pass(check_seq_len_bound(backend_under_test(), ck.model()));
  }
}

TEST_CASE("1 thread and 2 threads give the same logits", "[conformance]") {
  for (const char* file : kSharedModels) {
    INFO(backend_under_test() << " on " << file);
    const Checkpoint ck = Checkpoint::open(test::model_path(file));
    require_pass(check_threads_agree(backend_under_test(), ck.model()));
  }
  const Checkpoint ck = open_shape(generated_shapes()[1]);
  require_pass(check_threads_agree(backend_under_test(), ck.model()));
}
