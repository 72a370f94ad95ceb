// GraphBackend: prepare (stacking, graphs, plans), the token loop, and
// registration as "graph".
#include "graph_backend.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <sstream>
#include <thread>

#include <tbb/task_arena.h>

#include "compiler.hpp"
#include "layer_graphs.hpp"
#include "llama/cache_attention.hpp"
#include "llama/checked_math.hpp"
#include "llama/error.hpp"
#include "llama/kernels/numbers/dequantize.hpp"
#include "llama/kernels/steps/attend_token.hpp"
#include "llama/kernels/steps/f16_cache_attention.hpp"
#include "llama/kernels/steps/rope.hpp"
#include "llama/kernels/steps/run_c.hpp"
#include "llama/kernels/steps/runq_c.hpp"
#include "llama/memory_budget.hpp"
#include "llama/registry.hpp"
#include "page_release.hpp"

namespace llama::graph {
namespace {

int resolve_threads(int requested) {
  if (requested < 0) throw Error("graph: threads must be >= 1, got " + std::to_string(requested));
  if (requested > 0) return requested;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

size_t sz(int64_t n) { return static_cast<size_t>(n); }

bool same(const ArenaRef& a, const ArenaRef& b) {
  return a.offset == b.offset && a.cols == b.cols && a.ld == b.ld;
}

// The binding every layer's plan must agree on.
ArenaRef common_ref(const std::vector<Plan>& plans, bool input, const std::string& name) {
  const ArenaRef r = input ? plans.front().input(name).ref : plans.front().output(name).ref;
  for (const Plan& p : plans) {
    if (!same(r, input ? p.input(name).ref : p.output(name).ref)) {
      throw Error("graph: layer plans disagree on where " + name + " lives");
    }
  }
  return r;
}

UninitializedArray<float> arena_for(const std::vector<Plan>& plans) {
  size_t floats = 0;
  for (const Plan& p : plans) floats = std::max(floats, p.arena_floats());
  return UninitializedArray<float>(floats);
}

// Copies n rows of `cols` floats between buffers with row strides.
void copy_rows(float* dst, int64_t dst_ld, const float* src, int64_t src_ld, int64_t n,
               int64_t cols) {
  for (int64_t t = 0; t < n; ++t) {
    std::memcpy(dst + t * dst_ld, src + t * src_ld, sz(cols) * sizeof(float));
  }
}

const BackendRegistrar kRegistrar{
    "graph", "layers compiled into SSA plans with preplanned arenas, stacked projections, oneTBB",
    [](const BackendOptions& o) { return std::make_unique<GraphBackend>(o); }};

}  // namespace

GraphBackend::GraphBackend(const BackendOptions& options)
    : exec_(resolve_threads(options.threads)), numerics_(options.numerics), options_(options) {}

DTypeSet GraphBackend::supported_dtypes() const { return core_kernel_dtypes(); }

PlanSet GraphBackend::build_plans(int64_t tokens) const {
  const Config& c = config_;
  PlanSet p;
  p.tokens = tokens;
  CompileOptions options;
  options.numerics = numerics_;
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const LayerCopy& w = copies_.layer(l);
    const auto at = static_cast<size_t>(l);
    p.attention_in.push_back(compile(
        attention_in_graph(c, arithmetic_, attention_norms_[at], w, tokens, numerics_), options));
    p.feed_forward.push_back(
        compile(feed_forward_graph(c, arithmetic_, ffn_norms_[at], w, tokens, numerics_), options));
  }
  p.classifier = compile(
      classifier_graph(c, arithmetic_, final_norm_, copies_.classifier(), tokens, numerics_),
      options);
  p.att_x = common_ref(p.attention_in, true, "x");
  p.q = common_ref(p.attention_in, false, "q");
  p.k = common_ref(p.attention_in, false, "k");
  p.v = common_ref(p.attention_in, false, "v");
  p.ffn_x = common_ref(p.feed_forward, true, "x");
  p.ffn_att = common_ref(p.feed_forward, true, "att");
  p.ffn_out = common_ref(p.feed_forward, false, "x");
  p.cls_x = p.classifier.input("x").ref;
  p.logits = p.classifier.output("logits").ref;
  p.attention_in_arena = arena_for(p.attention_in);
  p.feed_forward_arena = arena_for(p.feed_forward);
  p.classifier_arena = UninitializedArray<float>(p.classifier.arena_floats());
  return p;
}

void GraphBackend::prepare(const Model& model) {
  // Free the previous model's copies and plans first so a second prepare never
  // holds two sets of stacked weights at once.
  prepared_ = false;
  decode_ = {};
  batch_ = {};
  copies_ = {};
  norms_.clear();
  const Admission admission = admit(model, *this, options_);  // refuses before allocating
  kv_ = admission.kv;
  config_ = admission.config;  // seq_len: BackendOptions::context
  const Config& c = config_;
  const ModelWeights& w = model.weights;
  // runq.c's arithmetic for llama2.c's Q8_0 weights, run.c's otherwise.
  arithmetic_ = step_arithmetic(w);
  steps_ = step_kernels(arithmetic_);
  // Beyond run.c's run state: the weight copies (bf16/f16 widened), the norms
  // widened, and the batch scores.
  const int64_t copy_bytes =
      checked_add(WeightCopies::bytes(w, c), F32Weights::norm_copy_bytes(w), "weight copies");
  const int64_t scores_bytes =
      checked_mul(checked_mul(checked_mul(kBatchTokens, c.n_heads, "scores"), c.seq_len, "scores"),
                  int64_t{sizeof(float)}, "scores");
  require_memory(checked_add(admission.run_state_bytes,
                             checked_add(copy_bytes, scores_bytes, "graph"), "graph"),
                 "the run state, weight copies and batch scores", available_memory(), model.source);
  embedding_ = w.token_embedding;
  attention_norms_.clear();
  ffn_norms_.clear();
  for (const LayerWeights& l : w.layers) {
    attention_norms_.push_back(norms_.view(l.attention_norm));
    ffn_norms_.push_back(norms_.view(l.ffn_norm));
  }
  final_norm_ = norms_.view(w.final_norm);
  // The originals are not read again (but for token embedding rows, which
  // fault back in one at a time): drop their pages as each is copied, so
  // originals and copies are never all resident.
  // Copied on every thread of the arena: the kernel clears each fresh huge
  // page on first touch, and that runs on both cores this way.
  std::atomic<size_t> released{0};
  const FileMappings mappings = FileMappings::of_this_process();
  const auto release = [&](std::span<const std::byte> original) {
    released += mappings.release(original);
  };
  const auto run_parts = [&](int64_t parts, const std::function<void(int64_t)>& copy_part) {
    exec_.for_each(parts, true, copy_part);
  };
  copies_ = WeightCopies(w, c, release, run_parts);
  // Tied f32 embeddings: rows are read from the classifier's copy, so the
  // file's pages, dropped after copying, are not faulted back in (with
  // readahead, a prompt of scattered tokens brings back most of the table).
  const MatrixCopy& cls = copies_.classifier();
  if (w.classifier.data.data() == w.token_embedding.data.data() &&
      w.token_embedding.dtype == DType::f32 && !cls.f32.empty()) {
    embedding_ = Tensor::f32_view("token_embedding (the classifier's copy)",
                                  w.token_embedding.shape, cls.f32);
  }
  released_bytes_ = released;
  decode_ = build_plans(1);
  batch_ = build_plans(kBatchTokens);
  rope_ = RopeTable(c);
  x_.assign(sz(kBatchTokens * c.dim), 0.0f);
  caches_.clear();
  for (int32_t i = 0; i < admission.sequences; ++i) caches_.emplace_back(c, kv_.dtype);
  lengths_ = SequenceLengths(admission.sequences, c.seq_len);
  segments_.reserve(sz(kBatchTokens));
  const bool f16 = kv_.dtype == KvDType::f16;
  decode_scratch_ =
      f16 ? int64_t(attend_f16_scratch_floats(c.head_size(), c.seq_len, 1)) : c.seq_len;
  prompt_scratch_ = int64_t(f16 ? attend_f16_scratch_floats(c.head_size(), c.seq_len, kBatchTokens)
                                : attend_scratch_floats(c.head_size(), c.seq_len));
  scores_ = UninitializedArray<float>(
      std::max(sz(c.n_heads * decode_scratch_), sz(exec_.threads()) * sz(prompt_scratch_)));
  rope_cos_.assign(sz(kBatchTokens * rope_.pairs()), 0.0f);
  rope_sin_.assign(sz(kBatchTokens * rope_.pairs()), 0.0f);
  prepared_ = true;
}

void GraphBackend::attention(int64_t layer, std::span<const Segment> segments, bool single,
                             const float* q, int64_t q_ld, float* out, int64_t out_ld) {
  const Config& c = config_;
  const int64_t hs = c.head_size(), heads = c.n_heads;
  const bool f16 = kv_.dtype == KvDType::f16;
  // Threads pay off once the cache is long enough.
  int64_t work = 0;
  for (const Segment& s : segments) work += s.n * (s.pos + s.n) * hs * heads;
  const bool parallel = work >= (int64_t{1} << 15);
  if (single) {
    const Segment& s = segments.front();
    KvCache& cache = caches_[sz(s.sequence)];
    const float* qs = q + s.row * q_ld;
    float* os = out + s.row * out_ld;
    exec_.for_each(heads, parallel, [&](int64_t h) {
      const auto scratch = scores_.span().subspan(sz(h * decode_scratch_), sz(decode_scratch_));
      attend_head_cached(steps_, {qs + h * hs, sz(hs)}, h, c.kv_mul(), cache, layer, s.pos + 1,
                         scratch, {os + h * hs, sz(hs)});
    });
    return;
  }
  // Tasks, listed per segment (so a segment's cache rows are read together):
  // a decode token (one row) is one task per group of heads, attend_token
  // walking its rows once for the group; a longer segment one task per (head,
  // block of queries), the block's queries sharing each key load
  // (dispatch/step_table.hpp, steps/f16_cache_attention.hpp), a head's blocks
  // one after another so its keys and values stay in L2, later blocks (more
  // positions) first. Whole tasks per thread (the executor's static
  // partition); scratch per arena thread. Every query's bits are its own
  // (attend_token's are attend_queries's), so the grouping never shows.
  const int64_t block = f16 ? kAttendF16Queries : q8::kAttendQueries;
  int64_t tokens = 0;
  for (const Segment& s : segments) tokens += s.n == 1 ? 1 : 0;
  const int64_t group =
      attend_token_group(heads, tokens, exec_.threads(), prompt_scratch_, c.seq_len);
  attention_tasks_.clear();
  for (const Segment& s : segments) {
    if (s.n == 1) {
      for (int64_t h = 0; h < heads; h += group)
        attention_tasks_.push_back({&s, h, std::min(heads, h + group), 0});
      continue;
    }
    const int64_t blocks = (s.n + block - 1) / block;
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t b = blocks - 1; b >= 0; --b) attention_tasks_.push_back({&s, h, h + 1, b});
  }
  const auto per_thread = sz(prompt_scratch_);
  exec_.for_each(static_cast<int64_t>(attention_tasks_.size()), parallel, [&](int64_t i) {
    const AttentionTask& task = attention_tasks_[sz(i)];
    const Segment* s = task.segment;
    KvCache& cache = caches_[sz(s->sequence)];
    const int slot = std::max(0, tbb::this_task_arena::current_thread_index());
    const auto scratch = scores_.span().subspan(sz(slot) * per_thread, per_thread);
    if (s->n == 1) {
      const TokenHeads t{q + s->row * q_ld, task.h0, task.h1,
                         c.kv_mul(),        hs,      out + s->row * out_ld};
      attend_token_cached(steps_, t, cache, layer, s->pos + 1, scratch);
      return;
    }
    const int64_t i0 = task.block * block;
    const HeadQueries b{q + (s->row + i0) * q_ld,
                        q_ld,
                        std::min(block, s->n - i0),
                        s->pos + i0,
                        task.h0,
                        c.kv_mul(),
                        hs,
                        out + (s->row + i0) * out_ld,
                        out_ld};
    attend_queries_cached(steps_, b, cache, layer, scratch);
  });
}

template <typename Body>
void GraphBackend::for_token_blocks(int64_t n, const Body& body) const {
  // One block a thread from a few tokens on; a token alone stays on the caller.
  const int64_t blocks = n >= 8 ? std::min<int64_t>(n, exec_.threads()) : 1;
  const int64_t per = (n + blocks - 1) / blocks;
  exec_.for_each(blocks, blocks > 1, [&](int64_t b) {
    const int64_t t0 = b * per, t1 = std::min(n, t0 + per);
    if (t0 < t1) body(t0, t1);
  });
}

void GraphBackend::run_layers(PlanSet& p, int64_t n, std::span<const Segment> segments) {
  const Config& c = config_;
  const int64_t dim = c.dim, kv_dim = c.kv_dim(), half = rope_.pairs();
  // Each row's position, and the sequence whose cache it goes to.
  for (const Segment& s : segments) {
    for (int64_t t = s.row; t < s.row + s.n; ++t) {
      rope_.angles(s.pos + t - s.row, std::span(rope_cos_).subspan(sz(t * half), sz(half)),
                   std::span(rope_sin_).subspan(sz(t * half), sz(half)));
    }
  }
  const auto place = [&](int64_t t) {
    const Segment* s = segments.data();
    while (t >= s->row + s->n) ++s;
    return std::pair<KvCache*, int64_t>(&caches_[sz(s->sequence)], s->pos + t - s->row);
  };
  // The single-query attention of decode's plan; the batch plan's attend_queries
  // for every query otherwise.
  const bool single = p.tokens == 1;
  float* a1 = p.attention_in_arena.data();
  float* a2 = p.feed_forward_arena.data();
  for (int64_t l = 0; l < c.n_layers; ++l) {
    for_token_blocks(n, [&](int64_t t0, int64_t t1) {
      copy_rows(a1 + p.att_x.offset + t0 * p.att_x.ld, p.att_x.ld, x_.data() + t0 * dim, dim,
                t1 - t0, dim);
    });
    exec_.run(p.attention_in[sz(l)], p.attention_in_arena.span(), n);
    // Rotations and cache rows per token, on every thread for a prompt (on
    // one, the other threads would sit idle through them).
    for_token_blocks(n, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const std::span<const float> cos_t(rope_cos_.data() + t * half, sz(half));
        const std::span<const float> sin_t(rope_sin_.data() + t * half, sz(half));
        float* q = a1 + p.q.offset + t * p.q.ld;
        float* k = a1 + p.k.offset + t * p.k.ld;
        const float* v = a1 + p.v.offset + t * p.v.ld;
        steps_.rope_rotate({q, sz(c.q_dim())}, rope_, cos_t, sin_t);
        steps_.rope_rotate({k, sz(kv_dim)}, rope_, cos_t, sin_t);
        const auto [cache, pos] = place(t);
        cache->store(l, pos, 1, k, v, kv_dim);
      }
    });
    attention(l, segments, single, a1 + p.q.offset, p.q.ld, a2 + p.ffn_att.offset, p.ffn_att.ld);
    for_token_blocks(n, [&](int64_t t0, int64_t t1) {
      copy_rows(a2 + p.ffn_x.offset + t0 * p.ffn_x.ld, p.ffn_x.ld, x_.data() + t0 * dim, dim,
                t1 - t0, dim);
    });
    exec_.run(p.feed_forward[sz(l)], p.feed_forward_arena.span(), n);
    for_token_blocks(n, [&](int64_t t0, int64_t t1) {
      copy_rows(x_.data() + t0 * dim, dim, a2 + p.ffn_out.offset + t0 * p.ffn_out.ld, p.ffn_out.ld,
                t1 - t0, dim);
    });
  }
}

std::span<const float> GraphBackend::forward(int32_t token, int64_t pos) {
  if (!prepared_) throw Error("graph: forward called before prepare");
  const Config& c = config_;
  check_token_position(c, token, pos);
  const SequenceRun ran{0, pos, std::span(&token, 1), RunLogits::last};
  lengths_.apply(std::span(&ran, 1));
  embedding_row(embedding_, token, std::span(x_).first(sz(c.dim)));
  const Segment segment{0, 0, pos, 1};
  run_layers(decode_, 1, std::span(&segment, 1));
  float* a3 = decode_.classifier_arena.data();
  std::memcpy(a3 + decode_.cls_x.offset, x_.data(), sz(c.dim) * sizeof(float));
  exec_.run(decode_.classifier, decode_.classifier_arena.span(), 1);
  return {a3 + decode_.logits.offset, sz(c.vocab_size)};
}

std::span<const float> GraphBackend::forward_batch(std::span<const int32_t> tokens,
                                                   int64_t start_pos, bool all_logits) {
  if (!prepared_) throw Error("graph: forward_batch called before prepare");
  if (tokens.empty()) throw Error("graph: forward_batch needs at least one token");
  const Config& c = config_;
  const auto n = static_cast<int64_t>(tokens.size());
  for (int64_t i = 0; i < n; ++i) check_token_position(c, tokens[sz(i)], start_pos + i);
  if (n == 1) return forward(tokens[0], start_pos);
  const SequenceRun ran{0, start_pos, tokens, RunLogits::last};
  lengths_.apply(std::span(&ran, 1));
  if (all_logits) batch_logits_.assign(sz(n * c.vocab_size), 0.0f);
  int64_t last_rows = 0;
  for (int64_t done = 0; done < n; done += kBatchTokens) {
    const int64_t m = std::min(kBatchTokens, n - done);
    for (int64_t t = 0; t < m; ++t) {
      embedding_row(embedding_, tokens[sz(done + t)],
                    std::span(x_).subspan(sz(t * c.dim), sz(c.dim)));
    }
    const Segment segment{0, 0, start_pos + done, m};
    run_layers(batch_, m, std::span(&segment, 1));
    last_rows = m;
    if (!all_logits) continue;
    float* a3 = batch_.classifier_arena.data();
    copy_rows(a3 + batch_.cls_x.offset, batch_.cls_x.ld, x_.data(), c.dim, m, c.dim);
    exec_.run(batch_.classifier, batch_.classifier_arena.span(), m);
    copy_rows(batch_logits_.data() + sz(done * c.vocab_size), c.vocab_size,
              a3 + batch_.logits.offset, batch_.logits.ld, m, c.vocab_size);
  }
  if (all_logits) return batch_logits_;
  // Only the last position's logits are wanted: one classifier row.
  float* a3 = decode_.classifier_arena.data();
  std::memcpy(a3 + decode_.cls_x.offset, x_.data() + (last_rows - 1) * c.dim,
              sz(c.dim) * sizeof(float));
  exec_.run(decode_.classifier, decode_.classifier_arena.span(), 1);
  return {a3 + decode_.logits.offset, sz(c.vocab_size)};
}

}  // namespace llama::graph
