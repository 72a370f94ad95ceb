// GraphBackend::describe: what prepare built, for llama-cli --explain.
#include <iomanip>
#include <sstream>

#include "graph_backend.hpp"
#include "llama/kernels/dispatch/half_path.hpp"
#include "llama/kernels/dispatch/product_table.hpp"

namespace llama::graph {
namespace {

double mib(size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

size_t plan_set_arena_bytes(const PlanSet& p) {
  return (p.attention_in_arena.size() + p.feed_forward_arena.size() + p.classifier_arena.size()) *
         sizeof(float);
}

// "f32 [128x64]" or "bf16 [128x64]": a stacked group's dtype and shape.
std::string stacked_text(const MatrixCopy& m, int64_t rows, int64_t cols) {
  std::ostringstream s;
  s << (m.typed() ? to_string(m.tensor.dtype) : "f32") << " [" << rows << "x" << cols << "]";
  return s.str();
}

}  // namespace

std::string GraphBackend::describe() const {
  std::ostringstream s;
  s << "graph backend: " << exec_.threads() << " thread(s) in one oneTBB task_arena\n";
  if (!prepared_) return s.str() + "  not prepared\n";
  const Config& c = config_;
  const LayerCopy& first = copies_.layer(0);
  s << "  model: " << c.to_string() << "\n"
    << "  steps (rmsnorm, rope, attention): " << steps_.name << " arithmetic, "
    << to_string(simd_level()) << " kernels\n"
    << "  numerics: " << to_string(numerics_)
    << (numerics_ == Numerics::fast ? " (bf16 prefill products may round activations to bf16)\n"
                                    : " (bf16/f16 weights upcast exactly, f32 math)\n");
  s << "  weights: copied into huge pages (" << std::fixed << std::setprecision(1)
    << mib(copies_.f32_bytes()) << " MiB f32, " << mib(copies_.typed_bytes())
    << " MiB in their own dtype); " << mib(released_bytes_)
    << " MiB of the originals' pages dropped from the mapping; norms "
    << (norms_.copied_bytes() > 0 ? "widened to f32" : "read in place") << "\n";
  if (!first.wqkv.empty() || !first.w13.empty()) {
    s << "  layout: per layer";
    if (!first.wqkv.empty()) {
      s << "; wq/wk/wv stacked into wqkv "
        << stacked_text(first.wqkv, c.q_dim() + 2 * c.kv_dim(), c.dim);
    }
    if (!first.w13.empty()) {
      s << "; w1/w3 stacked into w13 " << stacked_text(first.w13, 2 * c.hidden_dim, c.dim);
    }
    s << " (one product each: one pass over the weights, one packing of the input)\n";
  }
  if (!first.wqkv.f32.empty()) {
    s << "  matvec: f32 weights; decode sums in double"
         " lanes, 8 rows per pass; batches in f32 (packed 48-row panels, 48 rows x 8"
         " tokens per register tile), "
      << to_string(simd_level()) << " kernels; rows split across threads\n";
  }
  const MatrixCopy& cls = copies_.classifier();
  const MatrixCopy& typed = first.wq.typed() ? first.wq : cls;
  if (typed.typed()) {
    const KernelSet kernel = decode_.classifier.instructions.back().q8_kernel;
    s << "  matvec_typed: " << describe_products(typed.tensor, kernel, numerics_)
      << " (the core's kernels); inputs quantized as the dtype reads them, rows split across"
         " threads";
    if (batch_rounds_to_bf16(typed.tensor, kernel, numerics_)) {
      s << "; batches rounded to bf16 once per input (round_bf16, in the arena, "
        << to_string(bf16_batch_layout(kernel, numerics_)) << " layout), one "
        << to_string(half_batch_path(BlockKind::bf16, kernel, numerics_)) << " call per thread";
    }
    s << "\n";
  }
  s << "  per layer: plan attention_in; rope, KV cache write and attention over positions"
       " 0..pos (scores, softmax, weighted sum; oneTBB over heads); plan feed_forward\n"
    << "  after the last layer: plan classifier\n"
    << "  plans for 1 token (layer 0 shown; every layer runs the same plan on its own weights):\n";
  s << decode_.attention_in.front().describe("  plan attention_in");
  s << decode_.feed_forward.front().describe("  plan feed_forward");
  s << decode_.classifier.describe("  plan classifier");
  s << "  plans for " << batch_.tokens << " tokens (forward_batch, matrix-matrix products):\n";
  s << batch_.feed_forward.front().describe("  plan feed_forward");
  s << "  arenas: " << plan_set_arena_bytes(decode_) << " B (1 token), "
    << plan_set_arena_bytes(batch_) << " B (" << batch_.tokens << " tokens)\n"
    << "  " << describe_kv_cache(kv_, caches_.front().bytes())
    << (caches_.size() > 1 ? " per sequence, " + std::to_string(caches_.size()) + " sequences"
                           : std::string())
    << "\n";
  return s.str();
}

}  // namespace llama::graph
