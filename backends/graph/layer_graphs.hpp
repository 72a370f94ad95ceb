// The three graphs of a forward pass, for `tokens` rows at a time, built from
// the backend's weight copies (weight_copies.hpp) for any mix of dtypes:
//   attention_in: x -> rmsnorm -> q, k, v products (one stacked product when
//                 the copies stack wq, wk, wv: f32, bf16 or f16, sliced into
//                 q, k, v)
//   feed_forward: x, att -> x + wo att -> rmsnorm -> w1, w3 products (one
//                 stacked when the copies stack them) -> swiglu
//                 -> x' = x + wo att + w2 (...)
//   classifier:   x -> rmsnorm -> wcls -> logits
// Attention over the KV cache runs between the first two, outside any graph.
// RMSNorm is run.c's or runq.c's (rmsnorm_fma) as the model's step
// arithmetic says. A typed product whose dtype reads quantized inputs gets a
// quantize op first, one per input and format (runq.c quantizes xb once for
// q, k and v); a bf16 batch under fast numerics on a fast path (amx-bf16,
// onednn-bf16) gets a round_bf16 op, one per input.
#pragma once

#include <span>

#include "graph.hpp"
#include "llama/config.hpp"
#include "llama/kernels/dispatch/step_table.hpp"
#include "weight_copies.hpp"

namespace llama::graph {

// `norm`: f32 [dim] RMSNorm gains of the graph; `numerics` picks typed
// products' input formats (input_format(tensor, numerics)).
Graph attention_in_graph(const Config& c, StepArithmetic arithmetic, std::span<const float> norm,
                         const LayerCopy& w, int64_t tokens, Numerics numerics = Numerics::exact);
Graph feed_forward_graph(const Config& c, StepArithmetic arithmetic, std::span<const float> norm,
                         const LayerCopy& w, int64_t tokens, Numerics numerics = Numerics::exact);
Graph classifier_graph(const Config& c, StepArithmetic arithmetic, std::span<const float> norm,
                       const MatrixCopy& wcls, int64_t tokens, Numerics numerics = Numerics::exact);

}  // namespace llama::graph
