// The graph backend's weight copies: StackedWeights (f32, stacked) and
// QuantizedCopies (Q8_0) hold exactly the originals' values in the documented
// order, in one huge-page-aligned block, and hand every byte of every
// original to the release callback exactly once, in pieces that never
// straddle a 4 MiB boundary of the source.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "graph/huge_page_buffer.hpp"
#include "graph/quantized_copies.hpp"
#include "graph/stacked_weights.hpp"
#include "llama/error.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
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

TEST_CASE("StackedWeights: stacked wqkv and w13, wo, w2, wcls equal the originals",
          "[graph][copies]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("stories260K.bin"));
  const Config& c = ck.config();
  const TransformerWeights w = to_per_layer(ck.model().legacy_weights, c);
  PieceLog log;
  const StackedWeights copies(w, c, log.callback());
  REQUIRE(copies.bytes() == static_cast<size_t>(StackedWeights::floats(c)) * sizeof(float));
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const LayerTensors t = w.layer(c, l);
    const StackedLayer& s = copies.layer(l);
    const size_t q = t.wq.size(), k = t.wk.size(), v = t.wv.size(), h = t.w1.size();
    REQUIRE(s.wqkv.size() == q + k + v);
    CHECK(equal(s.wqkv.subspan(0, q), t.wq));
    CHECK(equal(s.wqkv.subspan(q, k), t.wk));
    CHECK(equal(s.wqkv.subspan(q + k, v), t.wv));
    REQUIRE(s.w13.size() == 2 * h);
    CHECK(equal(s.w13.subspan(0, h), t.w1));
    CHECK(equal(s.w13.subspan(h, h), t.w3));
    CHECK(equal(s.wo, t.wo));
    CHECK(equal(s.w2, t.w2));
  }
  CHECK(equal(copies.classifier(), w.wcls));
  CHECK(reinterpret_cast<uintptr_t>(copies.layer(0).wqkv.data()) % kHugePage == 0);
  // Every byte of every original handed over once, in pieces that stay inside
  // 4 MiB windows of the source.
  CHECK(log.bytes == copies.bytes());
  CHECK(log.disjoint());
  CHECK_FALSE(log.straddles);
}

TEST_CASE("StackedWeights: a tensor of the wrong size is refused, naming it", "[graph][copies]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("stories260K.bin"));
  const Config& c = ck.config();
  TransformerWeights w = to_per_layer(ck.model().legacy_weights, c);
  w.layers.at(1).wo = w.layers.at(1).wo.first(w.layers.at(1).wo.size() - 1);
  CHECK_THROWS_WITH(StackedWeights(w, c, [](std::span<const std::byte>) {}),
                    Catch::Contains("wo holds"));
}

TEST_CASE("QuantizedCopies: every int8 matrix and its scales equal the originals",
          "[graph][copies]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("q-gqa.v2.bin"));
  const Config& c = ck.config();
  const TransformerWeights w = to_per_layer(ck.model().legacy_weights, c);
  REQUIRE(w.format == WeightFormat::q8_0);
  PieceLog log;
  const QuantizedCopies copies(w, c, log.callback());
  REQUIRE(copies.bytes() == static_cast<size_t>(QuantizedCopies::bytes(w, c)));
  const auto same = [&](const QuantizedTensor& copy, const QuantizedTensor& original) {
    return equal(copy.values, original.values) && equal(copy.scales, original.scales) &&
           copy.group_size == original.group_size && copy.values.data() != original.values.data();
  };
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const QuantizedLayerTensors t = w.quantized_layer(c, l);
    const QuantizedLayerTensors& q = copies.layer(l);
    CHECK(same(q.wq, t.wq));
    CHECK(same(q.wk, t.wk));
    CHECK(same(q.wv, t.wv));
    CHECK(same(q.wo, t.wo));
    CHECK(same(q.w1, t.w1));
    CHECK(same(q.w2, t.w2));
    CHECK(same(q.w3, t.w3));
  }
  CHECK(same(copies.classifier(), w.q_wcls));
  CHECK(log.bytes == copies.bytes());
  CHECK(log.disjoint());
  CHECK_FALSE(log.straddles);
}

TEST_CASE("StackedWeights: parts run in any order, on several threads, give the same copy",
          "[graph][copies]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("stories260K.bin"));
  const Config& c = ck.config();
  const TransformerWeights w = to_per_layer(ck.model().legacy_weights, c);
  const StackedWeights in_order(w, c, [](std::span<const std::byte>) {});
  std::mutex mutex;
  PieceLog log;
  const CopiedFn logged = log.callback();
  const auto locked = [&](std::span<const std::byte> piece) {
    const std::lock_guard<std::mutex> hold(mutex);
    logged(piece);
  };
  int64_t parts_run = 0;
  const StackedWeights threaded(w, c, locked,
                                [&](int64_t parts, const std::function<void(int64_t)>& copy_part) {
                                  std::vector<std::thread> threads;
                                  for (int64_t p = parts - 1; p >= 0; --p)
                                    threads.emplace_back(copy_part, p);
                                  for (std::thread& t : threads) t.join();
                                  parts_run = parts;
                                });
  CHECK(parts_run == c.n_layers + 1);
  for (int64_t l = 0; l < c.n_layers; ++l) {
    CHECK(equal(threaded.layer(l).wqkv, in_order.layer(l).wqkv));
    CHECK(equal(threaded.layer(l).w13, in_order.layer(l).w13));
    CHECK(equal(threaded.layer(l).wo, in_order.layer(l).wo));
    CHECK(equal(threaded.layer(l).w2, in_order.layer(l).w2));
  }
  CHECK(equal(threaded.classifier(), in_order.classifier()));
  CHECK(log.bytes == threaded.bytes());
  CHECK(log.disjoint());
}
