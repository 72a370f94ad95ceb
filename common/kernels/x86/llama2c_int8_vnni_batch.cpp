// The AVX-512 VNNI Q8_0 batch kernel (prefill): rows of W times a batch of
// quantized vectors, with 16 tokens in the 16 lanes of a register.
//
// The batch is packed once per call: per block of 16 tokens and per 4 columns,
// one 64-byte vector holds each token's 4 values + 128 (u8: vpdpbusd's unsigned
// operand), and the x scales are transposed to [block, group, 16 tokens]. A
// weight row's 4 bytes are broadcast as the signed operand, so vpdpbusd sums
// (x + 128) * w for 16 tokens at once; the accumulator starts at -128 * sum(w)
// of the group (exact int32, computed once per row), leaving the int32 dot.
// Then per lane: val = fma(float(dot) * w_scale, x_scale, val), group by
// group: runq.c's sequence for each (row, token), 16 chains side by side, so
// results equal the portable kernel's bit for bit.
#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "kernels/products/llama2c_int8_kernels.hpp"
#include "kernels/x86/int8_batch_pack.hpp"
#include "kernels/x86/int8_vnni_ops.hpp"
#include "kernels/x86/tile_table.hpp"
#include "llama/kernels/x86/avx512_transpose.hpp"
#include "llama/uninitialized_array.hpp"

namespace llama::detail {
namespace {

using namespace vnni;
using avx512::transpose16;

// Below this many vectors a batch goes vector by vector (row_dot): a block of
// 16 lanes would be mostly padding.
constexpr int64_t kMinBatch = 4;
// A tile is kRows weight rows x kBlocks blocks of 16 tokens: kRows * kBlocks
// int32 and as many f32 accumulators, plus kBlocks packed vectors, in the 32
// zmm registers.
// (Other shapes that fit, 6 x 2, 5 x 2 or 3 x 3, run about as fast: the
// choice among them does not matter.)
constexpr int kRows = 4;
constexpr int kBlocks = 3;
// Rows per pass over the whole batch: their results (f32 [rows, tokens]) and
// weight sums stay in L1/L2 until stored.
constexpr int64_t kChunkRows = 64;

// out[r * groups + g] = -128 * sum of group g of row r of w [rows, cols],
// wrapping like vpdpbusd. Rows hold whole groups, so group c of the
// flattened [rows * groups] order is bytes [c * gs, (c + 1) * gs) of w: group
// sizes of whole 64-byte vectors go 16 groups at a time, 32 two per vector
// (32 at a time), each with one transposing reduction, reading w in order
// (this is where a prompt's weights first come from memory, so they stream
// in order rather than 16 rows side by side, and one reduction serves 16 or
// 32 groups rather than one each).
LLAMA_VNNI void minus_128_sums(const int8_t* w, int64_t rows, int64_t cols, int64_t gs,
                               int32_t* out) {
  const __m512i k128 = _mm512_set1_epi8(static_cast<char>(0x80));
  const __m512i zero = _mm512_setzero_si512();
  const int64_t total = rows * (cols / gs);
  if (gs % 64 != 0 && gs != 32) {
    for (int64_t c = 0; c < total; ++c) {
      __m512i acc = zero;
      for (int64_t k = 0; k < gs; k += 64) {
        acc = _mm512_dpbusd_epi32(acc, k128,
                                  _mm512_maskz_loadu_epi8(first_bytes(gs - k), w + c * gs + k));
      }
      out[c] = reduce_add(_mm512_sub_epi32(zero, acc));
    }
    return;
  }
  const int64_t per_pass = gs == 32 ? 32 : 16;  // groups per reduction
  for (int64_t c0 = 0; c0 < total; c0 += per_pass) {
    const int64_t n = std::min(per_pass, total - c0);  // groups here
    const int8_t* wc = w + c0 * gs;
    __m512i acc[16];
    if (gs == 32) {
      // Vector j: groups c0 + 2j and c0 + 2j + 1.
#pragma GCC unroll 16
      for (int j = 0; j < 16; ++j) {
        const int64_t bytes = std::clamp<int64_t>((n - 2 * j) * 32, 0, 64);
        acc[j] = _mm512_dpbusd_epi32(zero, k128,
                                     _mm512_maskz_loadu_epi8(first_bytes(bytes), wc + 64 * j));
      }
      __m512i lo, hi;
      reduce16_halves(acc, lo, hi);
      // Interleaved back into group order: lane j of lo is group 2j, of hi 2j + 1.
      alignas(64) int32_t even[16], odd[16];
      _mm512_store_si512(even, _mm512_sub_epi32(zero, lo));
      _mm512_store_si512(odd, _mm512_sub_epi32(zero, hi));
      for (int64_t c = 0; c < n; ++c) out[c0 + c] = c % 2 == 0 ? even[c / 2] : odd[c / 2];
      continue;
    }
#pragma GCC unroll 16
    for (int j = 0; j < 16; ++j) {
      acc[j] = zero;
      if (j >= n) continue;
      for (int64_t k = 0; k < gs; k += 64) {
        acc[j] = _mm512_dpbusd_epi32(acc[j], k128, _mm512_loadu_si512(wc + j * gs + k));
      }
    }
    alignas(64) int32_t sums[16];
    _mm512_store_si512(sums, _mm512_sub_epi32(zero, reduce16(acc)));
    std::copy_n(sums, n, out + c0);
  }
}

// acc += vpdpbusd(u, s), in place: with the intrinsic GCC 12 copies every
// accumulator to a scratch register and back around each instruction.
LLAMA_VNNI inline void dpbusd(__m512i& acc, __m512i u, __m512i s) {
  asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(u), "v"(s));
}

// What every tile of one call reads.
struct Job {
  const int8_t* w;        // i8 [rows, cols]
  const float* w_scales;  // f32 [rows, groups]
  const int32_t* comp;    // i32 [rows from row0, groups]: -128 * sum(w) per group
  const Packed* x;
  Floats16* res;  // f32 [rows from row0, blocks, 16 tokens]
  int64_t row0, cols, gs, groups;
};

// Rows [r0, r0 + R) x blocks [b0, b0 + B).
template <int R, int B>
LLAMA_VNNI void tile(const Job& j, int64_t r0, int64_t b0) {
  const Packed& p = *j.x;
  const int8_t* w[R];
  const float* ws[R];
  const int32_t* comp[R];
  for (int r = 0; r < R; ++r) {
    w[r] = j.w + (r0 + r) * j.cols;
    ws[r] = j.w_scales + (r0 + r) * j.groups;
    comp[r] = j.comp + (r0 - j.row0 + r) * j.groups;
  }
  const Bytes64* xv = p.values.data() + b0 * p.quads;
  const Floats16* xs = p.scales.data() + b0 * p.groups;
  const int64_t per_group = j.gs / 4;
  __m512 val[R][B];
  for (int r = 0; r < R; ++r) {
    for (int b = 0; b < B; ++b) val[r][b] = _mm512_setzero_ps();
  }
  for (int64_t g = 0; g < j.groups; ++g) {
    __m512i acc[R][B];
    for (int r = 0; r < R; ++r) {
      const __m512i c = _mm512_set1_epi32(comp[r][g]);
      for (int b = 0; b < B; ++b) acc[r][b] = c;
    }
    for (int64_t q = g * per_group; q < (g + 1) * per_group; ++q) {
      __m512i xq[B];
      for (int b = 0; b < B; ++b) xq[b] = _mm512_load_si512(xv + b * p.quads + q);
      for (int r = 0; r < R; ++r) {
        int32_t quad;
        std::memcpy(&quad, w[r] + 4 * q, 4);
        const __m512i wq = _mm512_set1_epi32(quad);
        for (int b = 0; b < B; ++b) dpbusd(acc[r][b], xq[b], wq);
      }
    }
    for (int r = 0; r < R; ++r) {
      const __m512 s = _mm512_set1_ps(ws[r][g]);
      for (int b = 0; b < B; ++b) {
        const __m512 scaled = _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(kFull16, acc[r][b]), s);
        val[r][b] = _mm512_fmadd_ps(scaled, _mm512_load_ps(xs[b * p.groups + g].f), val[r][b]);
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int b = 0; b < B; ++b)
      _mm512_store_ps(j.res[(r0 - j.row0 + r) * p.blocks + b0 + b].f, val[r][b]);
  }
}

// res [rows, blocks, 16 tokens] into out[t * out_stride + r]: 16 rows x 16
// tokens at a time, transposed in registers, so each token's rows are one
// store (out's rows are often 4 KiB apart: stores of single floats to them
// would fight over a few cache sets).
LLAMA_VNNI void store(const Floats16* res, const Packed& p, int64_t rows, float* out,
                      int64_t out_stride) {
  for (int64_t r0 = 0; r0 < rows; r0 += 16) {
    const int64_t here = std::min<int64_t>(16, rows - r0);
    const auto mask = static_cast<__mmask16>((1u << here) - 1);
    for (int64_t b = 0; b < p.blocks; ++b) {
      __m512i v[16];
      for (int r = 0; r < 16; ++r) {
        v[r] =
            r < here ? _mm512_load_si512(res[(r0 + r) * p.blocks + b].f) : _mm512_setzero_si512();
      }
      transpose16(v);
      const int64_t tokens = std::min<int64_t>(16, p.tokens - 16 * b);
      for (int64_t t = 0; t < tokens; ++t) {
        _mm512_mask_storeu_ps(out + (16 * b + t) * out_stride + r0, mask,
                              _mm512_castsi512_ps(v[t]));
      }
    }
  }
}

using TileFn = void (*)(const Job&, int64_t, int64_t);

// kTiles[R - 1][B - 1] is tile<R, B>: the edges of a call take smaller tiles.
constexpr auto kTiles =
    tile_table<TileFn, kRows, kBlocks>([]<int R, int B>() -> TileFn { return &tile<R, B>; });

}  // namespace

LLAMA_VNNI void q8_matmat_rows_vnni(std::span<float> out, int64_t out_stride,
                                    const QuantizedTensor& w, const Q8Batch& x, int64_t row_begin,
                                    int64_t row_end) {
  const int64_t cols = x.cols, gs = x.group_size, groups = cols / gs, n = x.n;
  if (row_end <= row_begin) return;
  if (gs % 4 != 0 || n < kMinBatch) {
    // Groups that split a 4-byte lane, or too few vectors to fill the lanes.
    for (int64_t r = row_begin; r < row_end; ++r) {
      for (int64_t t = 0; t < n; ++t) {
        out[size_t(t * out_stride + r)] =
            vnni::row_dot(w.values.data() + r * cols, w.scales.data() + r * groups, x.values_of(t),
                          x.scales_of(t), cols, gs);
      }
    }
    return;
  }
  const Packed p = pack_batch16(x, PackedValues::plus_128);
  const int64_t chunk = std::min<int64_t>(kChunkRows, row_end - row_begin);
  UninitializedArray<int32_t> comp(size_t(chunk * groups));
  UninitializedArray<Floats16> res(size_t(chunk * p.blocks));
  Job job{w.values.data(), w.scales.data(), comp.data(), &p, res.data(), 0, cols, gs, groups};
  for (int64_t c0 = row_begin; c0 < row_end; c0 += chunk) {
    const int64_t c1 = std::min(row_end, c0 + chunk);
    minus_128_sums(w.values.data() + c0 * cols, c1 - c0, cols, gs, comp.data());
    job.row0 = c0;
    for (int64_t r0 = c0; r0 < c1; r0 += kRows) {
      const auto rows = static_cast<size_t>(std::min<int64_t>(kRows, c1 - r0));
      for (int64_t b0 = 0; b0 < p.blocks; b0 += kBlocks) {
        const auto blocks = static_cast<size_t>(std::min<int64_t>(kBlocks, p.blocks - b0));
        kTiles[rows - 1][blocks - 1](job, r0, b0);
      }
    }
    store(res.data(), p, c1 - c0, out.data() + c0, out_stride);
  }
}

}  // namespace llama::detail
