// Registry: registration, creation by name and wrapper specs.
#include <catch2/catch.hpp>

#include "llama/error.hpp"
#include "llama/registry.hpp"

using namespace llama;
using Catch::Matchers::Contains;

namespace {

class NamedBackend : public InferenceBackend {
 public:
  explicit NamedBackend(std::string n) : name_(std::move(n)) {}
  std::string name() const override { return name_; }
  void prepare(const Model&) override {}
  std::span<const float> forward(int32_t, int64_t) override { return logits_; }

 private:
  std::string name_;
  std::vector<float> logits_ = {0.f};
};

}  // namespace

TEST_CASE("registry creates backends and wrappers by name", "[registry]") {
  auto& r = BackendRegistry::instance();
  r.add_backend("test-named", "a test backend", [](const BackendOptions& o) {
    return std::make_unique<NamedBackend>("named/" + std::to_string(o.threads));
  });
  r.add_wrapper("test-wrap", "a test wrapper",
                [](std::unique_ptr<InferenceBackend> inner, const BackendOptions&) {
                  return std::make_unique<NamedBackend>("wrapped(" + inner->name() + ")");
                });
  CHECK(r.contains("test-named"));
  CHECK(r.contains("blas"));  // built-in backends register themselves
  BackendOptions o;
  o.threads = 3;
  CHECK(r.create("test-named", o)->name() == "named/3");
  CHECK(r.create("test-wrap:test-named", o)->name() == "wrapped(named/3)");
  CHECK(r.create("test-wrap:test-wrap:test-named", o)->name() == "wrapped(wrapped(named/3))");

  CHECK_THROWS_WITH(r.create("nope"), Contains("unknown backend 'nope'") && Contains("blas"));
  CHECK_THROWS_WITH(r.create("nope:blas"), Contains("unknown backend wrapper 'nope'"));
  CHECK_THROWS_WITH(r.create("test-wrap:"), Contains("unknown backend ''"));
  CHECK_THROWS_WITH(r.add_backend("test-named", "", {}), Contains("already registered"));
  CHECK_THROWS_WITH(r.add_backend("a:b", "", {}), Contains("without ':'"));

  bool found_wrapper = false;
  for (const auto& e : r.entries()) found_wrapper |= (e.name == "test-wrap" && e.is_wrapper);
  CHECK(found_wrapper);
}
