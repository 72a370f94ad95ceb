// The amx-bf16 batch path (kernels/half_products.hpp): bf16 weights read in
// place times activations rounded to bf16 in the tile layout
// (Bf16Layout::tiles), on the AMX-BF16 tiles (tdpbf16ps: products of bf16
// pairs summed into f32, 16 x 16 results per instruction).
//
// The weights are the A operand as they lie: a tile is 16 weight rows of 32
// values, each row 64 contiguous bytes. Loaded straight from the row-major
// matrix, those 16 lines sit a row (2 KiB at 1024 columns) apart, fall into
// two L1 sets and miss the hardware prefetchers, leaving the tile products
// waiting on memory. So each block of 32 rows is first copied into a panel in
// tile order (bf16 [kb][32 rows][32]: every tile 1 KiB contiguous), its lines
// prefetched into L2 while the previous panel computes. That outruns oneDNN
// 2.6's AMX matmul both on the weights in place and on its own reordered copy
// of them (docs/performance.md), and the mapping stays the only copy of the
// weights.
//
// The activations are the B operand: 16 tokens' values in pairs,
// [16 pairs][16 tokens][2] per tile, made once per batch by
// round_batch_to_bf16(Bf16Layout::tiles). Results come out of the tiles as
// [rows][tokens] and are transposed into out[token][row] while the next
// block's tile products run.
//
// Results: each (row, token) is a chain of tdpbf16ps over the columns in
// order, the same whatever the row range or the batch around it.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/products/half_kernels.hpp"
#include "kernels/x86/amx_tiles.hpp"
#include "kernels/x86/simd.hpp"
#include "llama/kernels/x86/avx512_transpose.hpp"
#include "llama/kernels/x86/simd_target.hpp"
#include "llama/uninitialized_array.hpp"

namespace llama::detail {
namespace {

constexpr int64_t kPanelRows = 32;    // two A tiles
constexpr int64_t kTileValues = 512;  // bf16 values of one tile (1 KiB)
constexpr int64_t kPanelK = 4096;     // columns of a panel: 32 x 4096 bf16 = 256 KiB, in L2
constexpr int64_t kTileFloats = 256;  // f32 16 x 16

// 64-byte aligned storage for n values of T.
template <class T>
class AlignedBuffer {
 public:
  explicit AlignedBuffer(int64_t n) : raw_(static_cast<size_t>(n) + 64 / sizeof(T)) {
    const auto p = reinterpret_cast<uintptr_t>(raw_.data());
    data_ = reinterpret_cast<T*>((p + 63) / 64 * 64);
  }
  T* data() { return data_; }

 private:
  UninitializedArray<T> raw_;
  T* data_ = nullptr;
};

LLAMA_TARGET_AVX512 inline __mmask32 value_mask(int64_t left) {
  return left >= 32 ? 0xffffffffu : (1u << left) - 1;
}

// Tile columns [kb0, kb1) of weight rows [r0, r0 + rows) (rows <= 32) into
// panel bf16 [kb1 - kb0][32][32]; rows past `rows` and columns past w.cols zero.
LLAMA_TARGET_AVX512 void copy_panel(const uint16_t* w, int64_t cols, int64_t r0, int64_t rows,
                                    int64_t kb0, int64_t kb1, uint16_t* panel) {
  for (int64_t kb = kb0; kb < kb1; ++kb) {
    uint16_t* dst = panel + (kb - kb0) * kPanelRows * 32;
    const __mmask32 m = value_mask(cols - kb * 32);
    for (int64_t i = 0; i < kPanelRows; ++i) {
      const __m512i v = i < rows ? _mm512_maskz_loadu_epi16(m, w + (r0 + i) * cols + kb * 32)
                                 : _mm512_setzero_si512();
      _mm512_store_si512(dst + i * 32, v);
    }
  }
}

// A result tile c (f32 [16 rows][16 tokens]), plus the tile c2 when there is
// one (the sums of the activations' lower planes, Bf16Layout::tiles_x3), into
// out[token][row] for rows [rb, rb + rows) and tokens [tb, tb + tokens) (each
// at most 16).
LLAMA_TARGET_AVX512 void store_transposed(const float* c, const float* c2, float* out,
                                          int64_t out_stride, int64_t rb, int64_t rows, int64_t tb,
                                          int64_t tokens) {
  if (rows <= 0 || tokens <= 0) return;
  __m512 v[16];
  for (int i = 0; i < 16; ++i) {
    v[i] = _mm512_load_ps(c + i * 16);
    if (c2 != nullptr) v[i] = _mm512_add_ps(v[i], _mm512_load_ps(c2 + i * 16));
  }
  avx512::transpose16(v);
  const __mmask16 m = simd::tail_mask(rows);
  for (int64_t t = 0; t < std::min<int64_t>(tokens, 16); ++t) {
    _mm512_mask_storeu_ps(out + (tb + t) * out_stride + rb, m, v[t]);
  }
}

// Streams the bytes of the next panel (rows [r0, r0 + rows), tile columns
// [kb0, kb1)) into L2 a few lines per tile step, row by row, so the copy
// that follows the current panel finds them there.
class PanelPrefetch {
 public:
  PanelPrefetch() = default;
  PanelPrefetch(const uint16_t* w, int64_t cols, int64_t r0, int64_t rows, int64_t kb0, int64_t kb1,
                int64_t steps)
      : w_(w), cols_(cols), r0_(r0), rows_(rows), kb0_(kb0), kb1_(kb1) {
    const int64_t lines = rows * (kb1 - kb0);
    per_step_ = steps > 0 ? (lines + steps - 1) / steps : lines;
    row_ = 0;
    kb_ = kb0;
  }
  LLAMA_TARGET_AVX512 void step() {
    for (int64_t i = 0; i < per_step_ && row_ < rows_; ++i) {
      _mm_prefetch(reinterpret_cast<const char*>(w_ + (r0_ + row_) * cols_ + kb_ * 32),
                   _MM_HINT_T1);
      if (++kb_ == kb1_) {
        kb_ = kb0_;
        ++row_;
      }
    }
  }

 private:
  const uint16_t* w_ = nullptr;
  int64_t cols_ = 0, r0_ = 0, rows_ = 0, kb0_ = 0, kb1_ = 0;
  int64_t per_step_ = 0, row_ = 0, kb_ = 0;
};

// Finished result blocks (4 tiles: rows r, r + 16 x tokens t, t + 16; and
// with three planes 4 more, the lower planes' sums) in two buffers: the next
// block's tiles go into one while the other's block waits until the next
// block's tile products are under way, then is transposed out a tile per
// step, where the stores overlap the tile unit's work.
class PendingBlocks {
 public:
  PendingBlocks(float* out, int64_t out_stride, int64_t row_end, int64_t n, bool two_sums)
      : out_(out), out_stride_(out_stride), row_end_(row_end), n_(n), two_sums_(two_sums) {}
  // Where the block being computed puts its tiles: f32 [4][16][16], its
  // lower planes' sums 4 tiles after.
  float* filling() { return tiles_[1 - pending_]; }
  // The filled block is finished (rows rb.., tokens tb..): the older one is
  // stored out, this one waits.
  LLAMA_TARGET_AVX512 void commit(int64_t rb, int64_t tb) {
    flush_all();
    pending_ = 1 - pending_;
    rb_ = rb;
    tb_ = tb;
    next_ = 0;
  }
  LLAMA_TARGET_AVX512 void flush_one() {
    if (next_ >= 4) return;
    const int q = next_++;
    const int64_t rb = rb_ + (q >> 1) * 16, tb = tb_ + (q & 1) * 16;
    const float* c = tiles_[pending_] + q * kTileFloats;
    store_transposed(c, two_sums_ ? c + 4 * kTileFloats : nullptr, out_, out_stride_, rb,
                     row_end_ - rb, tb, n_ - tb);
  }
  LLAMA_TARGET_AVX512 void flush_all() {
    while (next_ < 4) flush_one();
  }

 private:
  float* out_;
  int64_t out_stride_, row_end_, n_;
  bool two_sums_;
  alignas(64) float tiles_[2][8 * kTileFloats];  // f32 [2][8][16 rows][16 tokens]
  int pending_ = 0;
  int64_t rb_ = 0, tb_ = 0;
  int next_ = 4;  // tiles of the pending block already stored (4: none pending)
};

// Starts the 4 result tiles: zero, or the sums of earlier column chunks.
inline void start_sums(bool first_chunk, const float* part) {
  if (first_chunk) {
    LLAMA_AMX_ZERO(0);
    LLAMA_AMX_ZERO(1);
    LLAMA_AMX_ZERO(2);
    LLAMA_AMX_ZERO(3);
    return;
  }
  LLAMA_AMX_LOAD(0, part, 64);
  LLAMA_AMX_LOAD(1, part + kTileFloats, 64);
  LLAMA_AMX_LOAD(2, part + 2 * kTileFloats, 64);
  LLAMA_AMX_LOAD(3, part + 3 * kTileFloats, 64);
}

inline void store_sums(float* c) {
  LLAMA_AMX_STORE(0, c, 64);
  LLAMA_AMX_STORE(1, c + kTileFloats, 64);
  LLAMA_AMX_STORE(2, c + 2 * kTileFloats, 64);
  LLAMA_AMX_STORE(3, c + 3 * kTileFloats, 64);
}

// The 2 x 2 result tiles += the panel's tile column (A tiles 4, 5: its 32
// rows) times the pair's B tiles b0, b1 (6, 7: its 32 tokens). Each load just
// before the first product that needs it: the first product starts after two
// loads, not four, so the tile unit waits less on the loads.
inline void tile_step(const uint16_t* a, const uint16_t* b0, const uint16_t* b1) {
  LLAMA_AMX_LOAD(4, a, 64);
  LLAMA_AMX_LOAD(6, b0, 64);
  LLAMA_AMX_DPBF16PS(0, 4, 6);
  LLAMA_AMX_LOAD(7, b1, 64);
  LLAMA_AMX_DPBF16PS(1, 4, 7);
  LLAMA_AMX_LOAD(5, a + kTileValues, 64);
  LLAMA_AMX_DPBF16PS(2, 5, 6);
  LLAMA_AMX_DPBF16PS(3, 5, 7);
}

// The same with the A tiles already loaded (a second plane of the batch).
inline void tile_step_same_a(const uint16_t* b0, const uint16_t* b1) {
  LLAMA_AMX_LOAD(6, b0, 64);
  LLAMA_AMX_DPBF16PS(0, 4, 6);
  LLAMA_AMX_LOAD(7, b1, 64);
  LLAMA_AMX_DPBF16PS(1, 4, 7);
  LLAMA_AMX_DPBF16PS(2, 5, 6);
  LLAMA_AMX_DPBF16PS(3, 5, 7);
}

}  // namespace

LLAMA_TARGET_AVX512 void matmat_rows_amx_bf16(float* out, int64_t out_stride, const BlockMatrix& w,
                                              const uint16_t* x, int64_t ld, int64_t n, int planes,
                                              int64_t plane_values, int64_t row_begin,
                                              int64_t row_end) {
  const int64_t cols = w.cols, kbs = ld / 32;  // tile columns
  const auto* weights = reinterpret_cast<const uint16_t*>(w.bytes.data());
  const int64_t pairs = (n + 31) / 32;  // 32-token blocks: two B tiles each
  const int64_t chunk = std::min(kbs, kPanelK / 32);
  const bool chunked = chunk < kbs;
  // Three planes: the first plane's sums, and the two lower planes' in their own tiles.
  const bool two_sums = planes == 3;
  const int64_t sum_tiles = two_sums ? 8 : 4;
  AlignedBuffer<uint16_t> panel(chunk * kPanelRows * 32);  // bf16 [chunk][32][32]
  // Columns in several panels: each pair's partial sums wait here between them.
  AlignedBuffer<float> partial(chunked ? pairs * sum_tiles * kTileFloats : 0);  // f32 [pairs][..]
  const int64_t block_values = kbs * kTileValues;  // one 16-token block of one plane of x
  PendingBlocks pending(out, out_stride, row_end, n, two_sums);

  amx::load_config(amx::full_tiles());
  const auto rows_at = [&](int64_t r) { return std::min(kPanelRows, row_end - r); };
  copy_panel(weights, cols, row_begin, rows_at(row_begin), 0, chunk, panel.data());
  for (int64_t r0 = row_begin; r0 < row_end; r0 += kPanelRows) {
    for (int64_t kb0 = 0; kb0 < kbs; kb0 += chunk) {
      const int64_t kb1 = std::min(kbs, kb0 + chunk);
      // The panel after this one: the next columns of these rows, or the next rows.
      const bool next_cols = kb1 < kbs;
      const int64_t nr = next_cols ? r0 : r0 + kPanelRows;
      const int64_t nkb0 = next_cols ? kb1 : 0, nkb1 = std::min(kbs, nkb0 + chunk);
      const bool more = next_cols || nr < row_end;
      PanelPrefetch prefetch;
      if (more) {
        const int64_t steps = pairs * (kb1 - kb0) * (two_sums ? 2 : 1);
        prefetch = PanelPrefetch(weights, cols, nr, rows_at(nr), nkb0, nkb1, steps);
      }
      for (int64_t p = 0; p < pairs; ++p) {
        const uint16_t* b0 = x + 2 * p * block_values;
        const uint16_t* b1 = b0 + block_values;
        float* part = chunked ? partial.data() + p * sum_tiles * kTileFloats : nullptr;
        const bool last_chunk = kb1 == kbs;
        float* sums = last_chunk ? pending.filling() : part;
        start_sums(kb0 == 0, part);
        for (int64_t kb = kb0; kb < kb1; ++kb) {
          if (more) prefetch.step();
          tile_step(panel.data() + (kb - kb0) * kPanelRows * 32, b0 + kb * kTileValues,
                    b1 + kb * kTileValues);
          pending.flush_one();
        }
        store_sums(sums);
        if (two_sums) {
          // Planes 1 and 2 into tiles of their own: their terms are at most
          // 2^-8 and 2^-16 of plane 0's, so their roundings stay that far
          // below those of plane 0's sum (one sum of all three would round
          // every term at the full sum's scale).
          const int64_t plane1 = plane_values, plane2 = 2 * plane_values;
          start_sums(kb0 == 0, chunked ? part + 4 * kTileFloats : nullptr);
          for (int64_t kb = kb0; kb < kb1; ++kb) {
            if (more) prefetch.step();
            const int64_t at = kb * kTileValues;
            tile_step(panel.data() + (kb - kb0) * kPanelRows * 32, b0 + plane1 + at,
                      b1 + plane1 + at);
            tile_step_same_a(b0 + plane2 + at, b1 + plane2 + at);
          }
          store_sums(sums + 4 * kTileFloats);
        }
        if (last_chunk) pending.commit(r0, 2 * p * 16);
      }
      if (more) copy_panel(weights, cols, nr, rows_at(nr), nkb0, nkb1, panel.data());
    }
  }
  pending.flush_all();
  amx::release();
}

}  // namespace llama::detail
