// --ctx-size: the positions an app's KV cache holds, checked against the model.
#pragma once

#include <cstdint>

#include "llama/model.hpp"

namespace llama::cli {

// The model as this run sees it: --ctx-size `ctx_size` (0: keep it) sets its KV
// cache's positions (a Hugging Face model's default is its context capped at 4096),
// never beyond the context the model was trained for (Error naming --ctx-size).
Model with_context(const Model& model, int64_t ctx_size);

}  // namespace llama::cli
