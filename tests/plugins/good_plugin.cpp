// A well-formed test plugin, "test-good": a backend that is the reference backend under
// another name, and a wrapper that counts forward calls. Its second file registers one
// more backend through a static BackendRegistrar, as a built-in backend would.
#include <memory>
#include <string>

#include "llama/plugins/plugin.hpp"

namespace {

using namespace llama;

class Renamed final : public InferenceBackend {
 public:
  Renamed(std::string name, std::unique_ptr<InferenceBackend> inner)
      : name_(std::move(name)), inner_(std::move(inner)) {}
  std::string name() const override { return name_; }
  DTypeSet supported_dtypes() const override { return inner_->supported_dtypes(); }
  void prepare(const Model& model) override { inner_->prepare(model); }
  std::span<const float> forward(int32_t token, int64_t pos) override {
    ++forwards_;
    return inner_->forward(token, pos);
  }
  std::string report() const override {
    return name_ + ": " + std::to_string(forwards_) + " forward calls\n" + inner_->report();
  }

 private:
  std::string name_;
  std::unique_ptr<InferenceBackend> inner_;
  int64_t forwards_ = 0;
};

}  // namespace

LLAMA_PLUGIN("test-good", registrar) {
  registrar.add_backend(
      "test-plugin-reference", "the reference backend, from a plugin", [](const BackendOptions& o) {
        return std::make_unique<Renamed>("test-plugin-reference",
                                         BackendRegistry::instance().create("reference", o));
      });
  registrar.add_wrapper("test-plugin-wrapper", "counts forward calls, from a plugin",
                        [](std::unique_ptr<InferenceBackend> inner, const BackendOptions&) {
                          return std::make_unique<Renamed>("test-plugin-wrapper:" + inner->name(),
                                                           std::move(inner));
                        });
}
