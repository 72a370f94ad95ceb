// The graph backend's weight copies (WeightCopies): f32 matrices stacked in
// f32, bf16/f16 groups stacked in their dtype (never widened, in every layer
// or in none), other dtypes byte for byte; exactly the originals' values in
// the documented order, in huge-page-aligned blocks, and every byte of every
// original handed to the release callback exactly once, in pieces that never
// straddle a 4 MiB boundary of the source.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

#include "conformance_models.hpp"
#include "graph/huge_page_buffer.hpp"
#include "graph/weight_copies.hpp"
#include "llama/error.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/kernels/numbers/dequantize.hpp"
#include "test_support.hpp"

using namespace llama;
using namespace llama::graph;

namespace {

constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
constexpr uintptr_t kPiece = uintptr_t{4} << 20;

template <typename T>
bool equal(std::span<const T> a, std::span<const T> b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

// The copy callback's pieces, checked as they arrive and totalled per byte.
struct PieceLog {
  size_t bytes = 0;
  std::map<uintptr_t, uintptr_t> pieces;  // begin -> end
  bool straddles = false;

  CopiedFn callback() {
    return [this](std::span<const std::byte> piece) {
      const auto begin = reinterpret_cast<uintptr_t>(piece.data());
      const uintptr_t end = begin + piece.size();
      if (begin / kPiece != (end - 1) / kPiece) straddles = true;
      pieces[begin] = end;
      bytes += piece.size();
    };
  }
  // No two pieces overlap.
  bool disjoint() const {
    uintptr_t last_end = 0;
    for (const auto& [begin, end] : pieces) {
      if (begin < last_end) return false;
      last_end = end;
    }
    return true;
  }
};

}  // namespace

TEST_CASE("HugePageArray: 2 MiB aligned, movable, empty when default", "[graph][copies]") {
  HugePageArray<float> empty;
  CHECK(empty.span().empty());
  HugePageArray<float> a(1000);
  REQUIRE(a.span().size() == 1000);
  CHECK(reinterpret_cast<uintptr_t>(a.span().data()) % kHugePage == 0);
  std::fill(a.span().begin(), a.span().end(), 3.0f);  // writable end to end
  const float* data = a.span().data();
  HugePageArray<float> b(std::move(a));
  CHECK(b.span().data() == data);
  CHECK(a.span().empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
  a = std::move(b);
  CHECK(a.span().data() == data);
  CHECK(a.span()[999] == 3.0f);
}

namespace {

std::vector<float> values(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.elements()));
  dequantize(t, v);
  return v;
}

bool equal_values(std::span<const float> copy, const Tensor& original) {
  return equal(copy, std::span<const float>(values(original)));
}

// The typed copy holds the original's bytes in another place.
bool same_typed(const MatrixCopy& copy, const Tensor& original) {
  const auto eq = [](std::span<const std::byte> a, std::span<const std::byte> b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
  };
  return copy.typed() && eq(copy.tensor.data, original.data) &&
         eq(copy.tensor.scales, original.scales) && copy.tensor.dtype == original.dtype &&
         copy.tensor.group_size == original.group_size &&
         copy.tensor.data.data() != original.data.data();
}

}  // namespace

TEST_CASE("WeightCopies: f32 models get stacked wqkv and w13, wo, w2, wcls in f32",
          "[graph][copies]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("stories260K.bin"));
  const Config& c = ck.config();
  {
    const ModelWeights& w = ck.model().weights;
    PieceLog log;
    const WeightCopies copies(w, c, log.callback());
    REQUIRE(copies.bytes() == static_cast<size_t>(WeightCopies::bytes(w, c)));
    CHECK(copies.typed_bytes() == 0);
    for (int64_t l = 0; l < c.n_layers; ++l) {
      const LayerWeights& t = w.layers[size_t(l)];
      const LayerCopy& s = copies.layer(l);
      const auto q = size_t(t.wq.elements()), k = size_t(t.wk.elements()),
                 v = size_t(t.wv.elements()), h = size_t(t.w1.elements());
      CHECK_FALSE(s.wqkv.typed());
      REQUIRE(s.wqkv.f32.size() == q + k + v);
      CHECK(equal_values(s.wqkv.f32.subspan(0, q), t.wq));
      CHECK(equal_values(s.wqkv.f32.subspan(q, k), t.wk));
      CHECK(equal_values(s.wqkv.f32.subspan(q + k, v), t.wv));
      CHECK(s.wk.f32.data() == s.wqkv.f32.data() + q);
      REQUIRE(s.w13.f32.size() == 2 * h);
      CHECK(equal_values(s.w13.f32.subspan(0, h), t.w1));
      CHECK(equal_values(s.w13.f32.subspan(h, h), t.w3));
      CHECK(equal_values(s.wo.f32, t.wo));
      CHECK(equal_values(s.w2.f32, t.w2));
      CHECK_FALSE(s.wq.typed());
    }
    CHECK(equal_values(copies.classifier().f32, w.classifier));
    CHECK(reinterpret_cast<uintptr_t>(copies.layer(0).wqkv.f32.data()) % kHugePage == 0);
    // Every byte of every original handed over once, in pieces that stay
    // inside 4 MiB windows of the source.
    CHECK(log.bytes == copies.f32_bytes());
    CHECK(log.disjoint());
    CHECK_FALSE(log.straddles);
  }
}

TEST_CASE("WeightCopies: a tensor of the wrong size is refused, naming it", "[graph][copies]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("stories260K.bin"));
  const Config& c = ck.config();
  ModelWeights w = ck.model().weights;
  Tensor& wo = w.layers.at(1).wo;
  wo = Tensor::f32_view(wo.name, {c.dim, c.dim - 1}, wo.f32().first(size_t(c.dim * (c.dim - 1))));
  CHECK_THROWS_WITH(WeightCopies(w, c, [](std::span<const std::byte>) {}),
                    Catch::Contains("wo[1] holds"));
}

TEST_CASE(
    "WeightCopies: Q8_0, bf16 and f16 matrices (and scales) are copied byte for byte, bf16 and "
    "f16 stacked",
    "[graph][copies]") {
  const Checkpoint q8 = Checkpoint::open(test::model_path("q-gqa.v2.bin"));
  const Checkpoint s260 = Checkpoint::open(test::model_path("stories260K.bin"));
  const Model bf16 = conformance::with_dtype(s260.model(), DType::bf16);
  const Model f16 = conformance::with_dtype(s260.model(), DType::f16);
  for (const Model* m : {&q8.model(), &bf16, &f16}) {
    const Config& c = m->config;
    const ModelWeights& w = m->weights;
    INFO(m->source << " in " << w.dtypes().to_string());
    PieceLog log;
    const WeightCopies copies(w, c, log.callback());
    REQUIRE(copies.bytes() == static_cast<size_t>(WeightCopies::bytes(w, c)));
    CHECK(copies.f32_bytes() == 0);
    for (int64_t l = 0; l < c.n_layers; ++l) {
      const LayerWeights& t = w.layers[size_t(l)];
      const LayerCopy& q = copies.layer(l);
      // Q8_0 has a scales region: never stacked (tests/test_graph_stacked.cpp
      // checks the stacked bf16/f16 layout itself).
      const bool stacks = w.dtypes().contains(DType::bf16) || w.dtypes().contains(DType::f16);
      CHECK(q.wqkv.typed() == stacks);
      CHECK(q.w13.typed() == stacks);
      CHECK(q.wqkv.f32.empty());
      for (const auto& [copy, original] : {std::pair{&q.wq, &t.wq},
                                           {&q.wk, &t.wk},
                                           {&q.wv, &t.wv},
                                           {&q.wo, &t.wo},
                                           {&q.w1, &t.w1},
                                           {&q.w2, &t.w2},
                                           {&q.w3, &t.w3}}) {
        INFO(original->name);
        CHECK(same_typed(*copy, *original));
        if (!copy->tensor.scales.empty()) {
          CHECK(reinterpret_cast<uintptr_t>(copy->tensor.scales.data()) % 64 == 0);
        }
      }
    }
    CHECK(same_typed(copies.classifier(), w.classifier));
    // Bytes handed over: the originals' values and scales (not the alignment
    // padding); a tied classifier is the embedding's bytes, copied once.
    size_t original = w.classifier.data.size() + w.classifier.scales.size();
    for (const LayerWeights& t : w.layers) {
      for (const Tensor* m : {&t.wq, &t.wk, &t.wv, &t.wo, &t.w1, &t.w2, &t.w3}) {
        original += m->data.size() + m->scales.size();
      }
    }
    CHECK(log.bytes == original);
    CHECK(log.disjoint());
    CHECK_FALSE(log.straddles);
  }
}

TEST_CASE("WeightCopies: a layer mixing dtypes stacks only the all-float groups",
          "[graph][copies]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("stories260K.bin"));
  const Config& c = ck.config();
  const Model q8 = conformance::with_dtype(ck.model(), DType::q8_0, 4);
  ModelWeights w = ck.model().weights;
  w.layers[0].wk = q8.weights.layers[0].wk;  // wq, wv f32, wk int8: no wqkv
  w.layers[1].w2 = q8.weights.layers[1].w2;  // w1, w3 f32: w13 stays
  const WeightCopies copies(w, c, [](std::span<const std::byte>) {});
  CHECK(copies.layer(0).wqkv.empty());
  CHECK(equal_values(copies.layer(0).wq.f32, w.layers[0].wq));
  CHECK(same_typed(copies.layer(0).wk, w.layers[0].wk));
  CHECK(equal_values(copies.layer(0).wv.f32, w.layers[0].wv));
  CHECK_FALSE(copies.layer(0).w13.empty());
  CHECK_FALSE(copies.layer(1).wqkv.empty());
  CHECK(same_typed(copies.layer(1).w2, w.layers[1].w2));
  CHECK(equal_values(copies.layer(1).w13.f32.first(size_t(w.layers[1].w1.elements())),
                     w.layers[1].w1));
}

TEST_CASE("WeightCopies: parts run in any order, on several threads, give the same copy",
          "[graph][copies]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("stories260K.bin"));
  const Config& c = ck.config();
  const ModelWeights& w = ck.model().weights;
  const WeightCopies in_order(w, c, [](std::span<const std::byte>) {});
  std::mutex mutex;
  PieceLog log;
  const CopiedFn logged = log.callback();
  const auto locked = [&](std::span<const std::byte> piece) {
    const std::lock_guard<std::mutex> hold(mutex);
    logged(piece);
  };
  int64_t parts_run = 0;
  const WeightCopies threaded(w, c, locked,
                              [&](int64_t parts, const std::function<void(int64_t)>& copy_part) {
                                std::vector<std::thread> threads;
                                for (int64_t p = parts - 1; p >= 0; --p)
                                  threads.emplace_back(copy_part, p);
                                for (std::thread& t : threads) t.join();
                                parts_run = parts;
                              });
  CHECK(parts_run == c.n_layers + 1);
  for (int64_t l = 0; l < c.n_layers; ++l) {
    CHECK(equal(threaded.layer(l).wqkv.f32, in_order.layer(l).wqkv.f32));
    CHECK(equal(threaded.layer(l).w13.f32, in_order.layer(l).w13.f32));
    CHECK(equal(threaded.layer(l).wo.f32, in_order.layer(l).wo.f32));
    CHECK(equal(threaded.layer(l).w2.f32, in_order.layer(l).w2.f32));
  }
  CHECK(equal(threaded.classifier().f32, in_order.classifier().f32));
  CHECK(log.bytes == threaded.bytes());
  CHECK(log.disjoint());
}

namespace {

size_t align64(size_t n) { return (n + 63) / 64 * 64; }

// The tensors' bytes, back to back.
std::vector<std::byte> concat(std::initializer_list<const Tensor*> parts) {
  std::vector<std::byte> v;
  for (const Tensor* t : parts) v.insert(v.end(), t->data.begin(), t->data.end());
  return v;
}

bool same_bytes(std::span<const std::byte> a, const std::vector<std::byte>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

}  // namespace

TEST_CASE("WeightCopies: bf16/f16 groups stacked back to back, matrices viewing the stack",
          "[graph][copies][stacked]") {
  const Checkpoint s260 = Checkpoint::open(test::model_path("stories260K.bin"));
  const Checkpoint gqa = Checkpoint::open(test::model_path("rand-gqa.bin"));
  // Grouped-query heads and sizes no 64-byte line divides: rows of 72 bf16
  // values (144 bytes), wq 72 rows, wk/wv 24, w1/w3 100.
  const Model odd =
      conformance::random_model(Config::llama2c(72, 100, 2, 6, 2, 97, 40, false), 3, "odd-gqa");
  for (const Model* base : {&s260.model(), &gqa.model(), &odd}) {
    for (const DType dtype : {DType::bf16, DType::f16}) {
      const Model m = conformance::with_dtype(*base, dtype);
      const Config& c = m.config;
      const ModelWeights& w = m.weights;
      INFO(m.source << " in " << to_string(dtype));
      PieceLog log;
      const WeightCopies copies(w, c, log.callback());
      // The accounting is the allocation, and the allocation the layout: per
      // layer wqkv, w13, wo, w2, each starting on a cache line; then wcls.
      REQUIRE(copies.bytes() == static_cast<size_t>(WeightCopies::bytes(w, c)));
      CHECK(copies.f32_bytes() == 0);
      size_t layout = 0, original = 0;
      for (int64_t l = 0; l < c.n_layers; ++l) {
        const LayerWeights& t = w.layers[size_t(l)];
        const LayerCopy& s = copies.layer(l);
        for (const auto& [stack, parts, rows] :
             {std::tuple{&s.wqkv, std::vector{&t.wq, &t.wk, &t.wv}, c.q_dim() + 2 * c.kv_dim()},
              std::tuple{&s.w13, std::vector{&t.w1, &t.w3}, 2 * c.hidden_dim}}) {
          const Tensor& st = stack->tensor;
          REQUIRE(stack->typed());
          CHECK(stack->f32.empty());
          CHECK(st.dtype == dtype);
          CHECK(st.shape == std::vector<int64_t>{rows, c.dim});
          CHECK(st.scales.empty());
          CHECK(reinterpret_cast<uintptr_t>(st.data.data()) % 64 == 0);
          std::vector<std::byte> want;
          for (const Tensor* p : parts) want.insert(want.end(), p->data.begin(), p->data.end());
          CHECK(same_bytes(st.data, want));
          layout = align64(layout) + want.size();
        }
        CHECK(s.wqkv.tensor.name == "wqkv[" + std::to_string(l) + "]");
        CHECK(s.w13.tensor.name == "w13[" + std::to_string(l) + "]");
        // Each matrix is a view of its rows of the stack, typed as its original.
        const std::byte* qkv = s.wqkv.tensor.data.data();
        const std::byte* h13 = s.w13.tensor.data.data();
        CHECK(s.wq.tensor.data.data() == qkv);
        CHECK(s.wk.tensor.data.data() == qkv + t.wq.data.size());
        CHECK(s.wv.tensor.data.data() == qkv + t.wq.data.size() + t.wk.data.size());
        CHECK(s.w1.tensor.data.data() == h13);
        CHECK(s.w3.tensor.data.data() == h13 + t.w1.data.size());
        for (const auto& [copy, o] : {std::pair{&s.wq, &t.wq},
                                      {&s.wk, &t.wk},
                                      {&s.wv, &t.wv},
                                      {&s.wo, &t.wo},
                                      {&s.w1, &t.w1},
                                      {&s.w2, &t.w2},
                                      {&s.w3, &t.w3}}) {
          INFO(o->name);
          CHECK(same_typed(*copy, *o));
          CHECK(copy->tensor.shape == o->shape);
          CHECK(copy->tensor.name == o->name);
          original += o->data.size();
        }
        layout = align64(layout) + t.wo.data.size();
        layout = align64(layout) + t.w2.data.size();
      }
      // An unstacked matrix's scales region (empty here) starts on a line too.
      layout = align64(align64(layout) + w.classifier.data.size());
      original += w.classifier.data.size();
      CHECK(copies.typed_bytes() == layout);
      // Every original's pages handed over once, never straddling 4 MiB.
      CHECK(log.bytes == original);
      CHECK(log.disjoint());
      CHECK_FALSE(log.straddles);
    }
  }
}

TEST_CASE("WeightCopies: a group stacks only when its matrices share one type in every layer",
          "[graph][copies][stacked]") {
  // Every layer runs one plan layout, so a group that cannot stack in one
  // layer stacks in none.
  const Checkpoint ck = Checkpoint::open(test::model_path("rand-gqa.bin"));
  const Config& c = ck.config();
  const Model bf16 = conformance::with_dtype(ck.model(), DType::bf16);
  const Model f16 = conformance::with_dtype(ck.model(), DType::f16);
  const Model q8 = conformance::with_dtype(ck.model(), DType::q8_0, 4);
  ModelWeights w = bf16.weights;
  w.layers[0].wk = f16.weights.layers[0].wk;         // bf16, f16, bf16: no wqkv; w13 stays
  w.layers[1].wo = ck.model().weights.layers[1].wo;  // wo f32: the rest unchanged
  {
    PieceLog log;
    const WeightCopies copies(w, c, log.callback());
    REQUIRE(copies.bytes() == static_cast<size_t>(WeightCopies::bytes(w, c)));
    CHECK(copies.f32_bytes() == static_cast<size_t>(w.layers[1].wo.data.size()));
    for (int64_t l = 0; l < c.n_layers; ++l) {
      INFO("layer " << l);
      const LayerCopy& q = copies.layer(l);
      const LayerWeights& t = w.layers[size_t(l)];
      CHECK(q.wqkv.empty());
      CHECK(q.w13.typed());
      CHECK(same_typed(q.wk, t.wk));
      CHECK(same_typed(q.wq, t.wq));
      CHECK(same_bytes(q.w13.tensor.data, concat({&t.w1, &t.w3})));
    }
    CHECK(equal_values(copies.layer(1).wo.f32, w.layers[1].wo));
    CHECK(log.disjoint());
  }
  w.layers[0].wk = bf16.weights.layers[0].wk;
  w.layers[1].w3 = q8.weights.layers[1].w3;  // w1 bf16, w3 int8: no w13; wqkv stays
  PieceLog log;
  const WeightCopies copies(w, c, log.callback());
  REQUIRE(copies.bytes() == static_cast<size_t>(WeightCopies::bytes(w, c)));
  for (int64_t l = 0; l < c.n_layers; ++l) {
    INFO("layer " << l);
    const LayerCopy& q = copies.layer(l);
    const LayerWeights& t = w.layers[size_t(l)];
    CHECK(q.wqkv.typed());
    CHECK(q.w13.empty());
    CHECK(same_bytes(q.wqkv.tensor.data, concat({&t.wq, &t.wk, &t.wv})));
    CHECK(same_typed(q.w3, t.w3));
  }
  CHECK(log.disjoint());
}
