// Planning and filling the weight copies: the layout is computed first (every
// matrix's place, overflow-checked), then the parts are copied.
#include "weight_copies.hpp"

#include "llama/checked_math.hpp"
#include "llama/error.hpp"

namespace llama::graph {
namespace {

constexpr int64_t kTypedAlign = 64;  // bytes: every typed region starts on a cache line

int64_t align_up(int64_t n) {
  return checked_add(n, kTypedAlign - 1, "weight copies") / kTypedAlign * kTypedAlign;
}

// f32 matrices become the f32 copy (and are stacked); every other dtype, bf16
// and f16 included, is copied byte for byte for the core's kernels.
bool is_f32(const Tensor& t) { return t.dtype == DType::f32; }

// One matrix's place in the copy.
struct Slot {
  const Tensor* source = nullptr;
  MatrixCopy LayerCopy::*member = nullptr;  // null: the classifier
  int64_t elements = 0;                     // values the config implies
  int64_t f32_at = -1;                      // floats into floats_, f32 matrices
  int64_t data_at = -1, scales_at = -1;     // bytes into typed_, other dtypes
};

// Part 0 is the classifier, part 1 + l layer l: wq, wk, wv, w1, w3, wo, w2,
// the stacked groups (when all f32) contiguous in that order.
std::vector<Slot> part_slots(const ModelWeights& w, const Config& c, int64_t part) {
  const int64_t dim = c.dim, q = c.q_dim(), kv = c.kv_dim(), hidden = c.hidden_dim;
  if (part == 0) return {{&w.classifier, nullptr, checked_mul(c.vocab_size, dim, "wcls")}};
  const LayerWeights& l = w.layers.at(static_cast<size_t>(part - 1));
  return {{&l.wq, &LayerCopy::wq, checked_mul(q, dim, "wq")},
          {&l.wk, &LayerCopy::wk, checked_mul(kv, dim, "wk")},
          {&l.wv, &LayerCopy::wv, checked_mul(kv, dim, "wv")},
          {&l.w1, &LayerCopy::w1, checked_mul(hidden, dim, "w1")},
          {&l.w3, &LayerCopy::w3, checked_mul(hidden, dim, "w3")},
          {&l.wo, &LayerCopy::wo, checked_mul(dim, q, "wo")},
          {&l.w2, &LayerCopy::w2, checked_mul(dim, hidden, "w2")}};
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
  for (int64_t i = 1; i <= c.n_layers + 1; ++i) {
    const int64_t part = i % (c.n_layers + 1);  // 1, 2, ..., n_layers, then 0
    p.f32_begin[static_cast<size_t>(part)] = p.floats;
    std::vector<Slot> slots = part_slots(w, c, part);
    for (Slot& s : slots) {
      if (is_f32(*s.source)) {
        s.f32_at = p.floats;
        p.floats = checked_add(p.floats, s.elements, "weight copies");
        continue;
      }
      s.data_at = align_up(p.typed_bytes);
      const auto data = static_cast<int64_t>(s.source->data.size());
      s.scales_at = align_up(checked_add(s.data_at, data, "weight copies"));
      p.typed_bytes =
          checked_add(s.scales_at, static_cast<int64_t>(s.source->scales.size()), "weight copies");
    }
    p.parts[static_cast<size_t>(part)] = std::move(slots);
    p.f32_end[static_cast<size_t>(part)] = p.floats;
  }
  checked_mul(p.floats, int64_t{sizeof(float)}, "weight copies");
  return p;
}

// The slots of parts [begin, end) of one group are f32 and back to back.
bool stacked(const std::vector<Slot>& slots, size_t begin, size_t end) {
  for (size_t i = begin; i < end; ++i) {
    if (slots[i].f32_at < 0) return false;
  }
  return true;
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
    if (stacked(slots, 0, 3)) {
      layer.wqkv = floats.subspan(at(slots[0].f32_at),
                                  at(slots[0].elements + slots[1].elements + slots[2].elements));
    }
    if (stacked(slots, 3, 5)) {
      layer.w13 = floats.subspan(at(slots[3].f32_at), at(slots[3].elements + slots[4].elements));
    }
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
