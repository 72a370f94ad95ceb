// --ctx-size applied to a model's config.
#include "model_context.hpp"

#include <string>

#include "llama/error.hpp"

namespace llama::cli {

Model with_context(const Model& model, int64_t ctx_size) {
  const Config& c = model.config;
  if (ctx_size > c.context_length) {
    throw Error("--ctx-size: " + std::to_string(ctx_size) +
                " is larger than the model's context (" +
                (c.context_length == c.seq_len ? "seq_len " : "max_position_embeddings ") +
                std::to_string(c.context_length) + ")");
  }
  Model m = model;
  if (ctx_size > 0) m.config.seq_len = ctx_size;
  return m;
}

}  // namespace llama::cli
