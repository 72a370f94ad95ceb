// GraphBackend::describe: what prepare built, for llama-cli --explain.
#include <iomanip>
#include <sstream>

#include "graph_backend.hpp"
#include "llama/kernels/q8.hpp"

namespace llama::graph {
namespace {

double mib(size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

size_t plan_set_arena_bytes(const PlanSet& p) {
  return (p.attention_in_arena.size() + p.feed_forward_arena.size() + p.classifier_arena.size()) *
         sizeof(float);
}

}  // namespace

std::string GraphBackend::describe() const {
  std::ostringstream s;
  s << "graph backend: " << exec_.threads() << " thread(s) in one oneTBB task_arena\n";
  if (!prepared_) return s.str() + "  not prepared\n";
  const Config& c = config_;
  if (q8_) {
    s << "  model: " << c.to_string() << "\n"
      << "  weights: Q8_0 in groups of " << weights_.group_size
      << ", int8 matrices and scales copied into huge pages (" << std::fixed << std::setprecision(1)
      << mib(quantized_.bytes()) << " MiB, not stacked); " << mib(released_bytes_)
      << " MiB of the originals' pages dropped from the mapping\n"
      << "  matvec_q8: activations quantized per group (runq.c), int32 sums per group ("
      << to_string(decode_.classifier.instructions.back().q8_kernel)
      << " kernel), rows split across threads; RMSNorm, rope and attention in runq.c's f32 "
         "FMAs\n";
  } else {
    s << "  model: " << c.to_string() << "\n"
      << "  layout: per layer; wq/wk/wv stacked into wqkv [" << c.q_dim() + 2 * c.kv_dim() << "x"
      << c.dim << "], w1/w3 into w13 [" << 2 * c.hidden_dim << "x" << c.dim
      << "]; these, wo, w2 and wcls copied into one block of huge pages (" << std::fixed
      << std::setprecision(1) << mib(stacked_.bytes()) << " MiB); norms read in place; "
      << mib(released_bytes_) << " MiB of the originals' pages dropped from the mapping\n"
      << "  matvec: f32 weights; decode sums in double lanes (AVX-512), 8 rows per pass; "
         "batches in f32 (packed 48-row panels, 48 rows x 8 tokens per register tile); rows "
         "split across threads; RMSNorm and attention dots in double\n";
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
    << "  KV cache: " << (key_cache_.size() + val_cache_.size()) * sizeof(float)
    << " bytes (f32 [n_layers, seq_len, kv_dim] keys and values)\n";
  return s.str();
}

}  // namespace llama::graph
