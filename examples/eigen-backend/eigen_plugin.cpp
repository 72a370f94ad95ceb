// The plugin "eigen": its entry point registers the eigen backend by name.
#include <memory>

#include "eigen_backend.hpp"
#include "llama/plugins/plugin.hpp"

LLAMA_PLUGIN("eigen", registrar) {
  registrar.add_backend(
      "eigen", "run.c's forward pass on Eigen matrix-vector and matrix-matrix products, f32",
      [](const llama::BackendOptions& options) {
        return std::make_unique<eigen_backend::EigenBackend>(options);
      });
}
