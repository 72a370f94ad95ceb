// Planning and filling the weight copies: the layout is computed first (every
// matrix's place, overflow-checked), then the parts are copied.
#include "weight_copies.hpp"

#include <string>
#include <utility>

#include "llama/checked_math.hpp"
#include "llama/error.hpp"

namespace llama::graph {
namespace {

constexpr int64_t kTypedAlign = 64;  // bytes: every typed region starts on a cache line

int64_t align_up(int64_t n) {
  return checked_add(n, kTypedAlign - 1, "weight copies") / kTypedAlign * kTypedAlign;
}

// f32 matrices become the f32 copy; every other dtype, bf16 and f16
// included, is copied byte for byte for the core's kernels.
bool is_f32(const Tensor& t) { return t.dtype == DType::f32; }

// Typed dtypes whose matrices stack: each row its own bytes with no scales
// region, so rows laid back to back are a matrix of the same dtype (bf16, f16
// and GGUF's blocks, whose scales sit inside each block); llama2.c's Q8_0
// keeps its scales apart.
bool stacks_typed(DType d) { return d != DType::f32 && d != DType::q8_0; }

// One matrix's place in the copy.
struct Slot {
  const Tensor* source = nullptr;
  MatrixCopy LayerCopy::*member = nullptr;  // null: the classifier
  int64_t elements = 0;                     // values the config implies
  int64_t cols = 0;                         // columns the config implies
  int64_t f32_at = -1;                      // floats into floats_, f32 matrices
  int64_t data_at = -1, scales_at = -1;     // bytes into typed_, other dtypes
  bool typed_stack = false;                 // in a group stacked in typed_
};

// Part 0 is the classifier, part 1 + l layer l: wq, wk, wv, w1, w3, wo, w2,
// the stacked groups contiguous in that order.
std::vector<Slot> part_slots(const ModelWeights& w, const Config& c, int64_t part) {
  const int64_t dim = c.dim, q = c.q_dim(), kv = c.kv_dim(), hidden = c.hidden_dim;
  if (part == 0) return {{&w.classifier, nullptr, checked_mul(c.vocab_size, dim, "wcls"), dim}};
  const LayerWeights& l = w.layers.at(static_cast<size_t>(part - 1));
  return {{&l.wq, &LayerCopy::wq, checked_mul(q, dim, "wq"), dim},
          {&l.wk, &LayerCopy::wk, checked_mul(kv, dim, "wk"), dim},
          {&l.wv, &LayerCopy::wv, checked_mul(kv, dim, "wv"), dim},
          {&l.w1, &LayerCopy::w1, checked_mul(hidden, dim, "w1"), dim},
          {&l.w3, &LayerCopy::w3, checked_mul(hidden, dim, "w3"), dim},
          {&l.wo, &LayerCopy::wo, checked_mul(dim, q, "wo"), q},
          {&l.w2, &LayerCopy::w2, checked_mul(dim, hidden, "w2"), hidden}};
}

// Slots [begin, end) stack in the typed copy: one stackable dtype, each a
// matrix of the shape the config implies (anything else is copied alone and
// refused there, naming it, if its size is wrong).
bool typed_group(const std::vector<Slot>& slots, size_t begin, size_t end) {
  const DType d = slots[begin].source->dtype;
  if (!stacks_typed(d)) return false;
  for (size_t i = begin; i < end; ++i) {
    const Tensor& t = *slots[i].source;
    if (t.dtype != d || !t.scales.empty() || t.shape.size() != 2 || t.cols() != slots[i].cols ||
        t.elements() != slots[i].elements) {
      return false;
    }
  }
  return true;
}

struct Plan {
  std::vector<std::vector<Slot>> parts;     // by part number
  std::vector<int64_t> f32_begin, f32_end;  // per part: its floats
  int64_t floats = 0, typed_bytes = 0;
};

// Layers first, so that layer 0 starts the block on a huge page, then the
// classifier.
Plan plan(const ModelWeights& w, const Config& c) {
  Plan p;
  const auto n = static_cast<size_t>(c.n_layers) + 1;
  p.parts.resize(n);
  p.f32_begin.resize(n);
  p.f32_end.resize(n);
  // A typed group stacks only where every layer's group stacks (typed, or
  // all f32, which the f32 copy stacks), so that every layer runs one plan
  // layout (the backend's layer plans must agree on where q, k and v live):
  // Q4_K_M, for one, gives wv Q6_K in some layers only.
  const std::pair<size_t, size_t> groups[] = {{0, 3}, {3, 5}};
  bool stack[] = {true, true};
  for (int64_t part = 1; part <= c.n_layers; ++part) {
    const std::vector<Slot> slots = part_slots(w, c, part);
    for (size_t g = 0; g < 2; ++g) {
      const auto [begin, end] = groups[g];
      bool f32 = true;
      for (size_t i = begin; i < end; ++i) f32 = f32 && is_f32(*slots[i].source);
      stack[g] = stack[g] && (f32 || typed_group(slots, begin, end));
    }
  }
  for (int64_t i = 1; i <= c.n_layers + 1; ++i) {
    const int64_t part = i % (c.n_layers + 1);  // 1, 2, ..., n_layers, then 0
    p.f32_begin[static_cast<size_t>(part)] = p.floats;
    std::vector<Slot> slots = part_slots(w, c, part);
    if (part > 0) {
      for (size_t g = 0; g < 2; ++g) {
        for (size_t i = groups[g].first; i < groups[g].second; ++i) slots[i].typed_stack = stack[g];
      }
    }
    for (size_t i = 0; i < slots.size(); ++i) {
      Slot& s = slots[i];
      if (is_f32(*s.source)) {
        s.f32_at = p.floats;
        p.floats = checked_add(p.floats, s.elements, "weight copies");
        continue;
      }
      // A stacked group's matrices follow each other without padding (each
      // has no scales); the group (starting at slot 0 or 3), like every
      // other matrix, starts aligned.
      const bool follows = s.typed_stack && i != 0 && i != 3;
      s.data_at = follows ? p.typed_bytes : align_up(p.typed_bytes);
      const int64_t data_end =
          checked_add(s.data_at, static_cast<int64_t>(s.source->data.size()), "weight copies");
      s.scales_at = s.typed_stack ? data_end : align_up(data_end);
      p.typed_bytes =
          checked_add(s.scales_at, static_cast<int64_t>(s.source->scales.size()), "weight copies");
    }
    p.parts[static_cast<size_t>(part)] = std::move(slots);
    p.f32_end[static_cast<size_t>(part)] = p.floats;
  }
  checked_mul(p.floats, int64_t{sizeof(float)}, "weight copies");
  return p;
}

// The slots [begin, end) of one group are f32 and back to back.
bool f32_group(const std::vector<Slot>& slots, size_t begin, size_t end) {
  for (size_t i = begin; i < end; ++i) {
    if (slots[i].f32_at < 0) return false;
  }
  return true;
}

// "wqkv[3]" (appended piece by piece: g++ 12 warns falsely on a + chain).
std::string indexed(const char* base, int64_t i) {
  std::string s(base);
  s += '[';
  s += std::to_string(i);
  s += ']';
  return s;
}

// A stacked group's matrix: f32 [rows, cols] in `floats`, or the group's
// dtype [rows, cols] in `typed` named `name`; empty for an unstacked group.
MatrixCopy group_copy(const std::vector<Slot>& slots, size_t begin, size_t end,
                      std::span<float> floats, std::span<std::byte> typed,
                      const std::string& name) {
  MatrixCopy m;
  int64_t elements = 0;
  for (size_t i = begin; i < end; ++i) elements += slots[i].elements;  // <= the copy's size
  const auto at = [](int64_t v) { return static_cast<size_t>(v); };
  if (f32_group(slots, begin, end)) {
    m.f32 = floats.subspan(at(slots[begin].f32_at), at(elements));
  } else if (slots[begin].typed_stack) {
    const Tensor& first = *slots[begin].source;
    const int64_t bytes = slots[end - 1].scales_at - slots[begin].data_at;
    m.tensor = Tensor::view(name, first.dtype, {elements / first.cols(), first.cols()},
                            typed.subspan(at(slots[begin].data_at), at(bytes)));
  }
  return m;
}

}  // namespace

int64_t WeightCopies::bytes(const ModelWeights& w, const Config& c) {
  const Plan p = plan(w, c);
  return checked_add(checked_mul(p.floats, int64_t{sizeof(float)}, "weight copies"), p.typed_bytes,
                     "weight copies");
}

WeightCopies::WeightCopies(const ModelWeights& w, const Config& c, const CopiedFn& copied,
                           const PartsFn& run_parts) {
  const Plan p = plan(w, c);
  floats_ = HugePageArray<float>(static_cast<size_t>(p.floats));
  typed_ = HugePageArray<std::byte>(static_cast<size_t>(p.typed_bytes));
  const std::span<float> floats = floats_.span();
  const std::span<std::byte> typed = typed_.span();
  const auto at = [](int64_t v) { return static_cast<size_t>(v); };
  // Where every matrix's copy goes, before anything is copied.
  layers_.resize(static_cast<size_t>(c.n_layers));
  for (size_t part = 0; part < p.parts.size(); ++part) {
    for (const Slot& s : p.parts[part]) {
      MatrixCopy m;
      if (s.f32_at >= 0) {
        m.f32 = floats.subspan(at(s.f32_at), at(s.elements));
      } else {
        m.tensor = *s.source;  // name, dtype, shape, group size; bytes: the copy's
        m.tensor.data = typed.subspan(at(s.data_at), s.source->data.size());
        m.tensor.scales = typed.subspan(at(s.scales_at), s.source->scales.size());
      }
      if (s.member == nullptr) {
        classifier_ = m;
      } else {
        layers_[part - 1].*s.member = m;
      }
    }
    if (part == 0) continue;
    const std::vector<Slot>& slots = p.parts[part];
    LayerCopy& layer = layers_[part - 1];
    layer.wqkv = group_copy(slots, 0, 3, floats, typed, indexed("wqkv", part - 1));
    layer.w13 = group_copy(slots, 3, 5, floats, typed, indexed("w13", part - 1));
  }
  run_parts(c.n_layers + 1, [&](int64_t part) {
    const auto i = static_cast<size_t>(part);
    const int64_t f32_begin = p.f32_begin[i];
    CopyWriter<float> f32_out(floats.subspan(at(f32_begin), at(p.f32_end[i] - f32_begin)), copied);
    for (const Slot& s : p.parts[i]) {
      if (s.f32_at >= 0) {
        f32_out.append_f32(*s.source, s.elements);
        continue;
      }
      if (s.source->elements() != s.elements) {
        throw Error("graph: " + s.source->name + " holds " + std::to_string(s.source->elements()) +
                    " values, expected " + std::to_string(s.elements));
      }
      const auto region = [&](int64_t begin, std::span<const std::byte> from) {
        CopyWriter<std::byte> out(typed.subspan(at(begin), from.size()), copied);
        out.append(from, static_cast<int64_t>(from.size()), s.source->name);
      };
      region(s.data_at, s.source->data);
      region(s.scales_at, s.source->scales);
    }
  });
}

}  // namespace llama::graph
