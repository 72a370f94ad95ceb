// The AVX-512 VNNI Q8_0 matrix-vector kernel (decode).
//
// When the group size is a multiple of 64, rows go 16 at a time, one per lane
// of the f32 results. w's bytes are flipped to w + 128 (u8: vpdpbusd's
// unsigned operand) and x stays the signed one, so one xor and one vpdpbusd
// cover 64 bytes of a row, and each 64 bytes of x are loaded once for 16 rows.
// The sum picks up 128 * sum(x) per group, the same for every row: computed
// once per call and subtracted after the reduction (all exact int32). Per
// group, the 16 rows' accumulators are reduced by one transpose of adds into
// lane per row, then val = fma(float(dot) * w_scale, x_scale, val) for 16 rows
// side by side: runq.c's sequence per row, so results equal the portable
// kernel's bit for bit. Group size 32 (llama2.c's export halves 64 to fit a
// dim such as 288) goes the same way with two groups per 64 bytes, whose
// 256-bit halves are reduced apart (rows_dot32). Other group sizes take
// row_dot (int8_vnni_ops.hpp). Sixteen rows rather than one at a time (with
// |w| and x carrying w's sign) because a row alone spends much of its time in
// per-row reductions and a latency-bound FMA chain.
#include <algorithm>

#include "kernels/products/llama2c_int8_kernels.hpp"
#include "kernels/x86/int8_vnni_ops.hpp"
#include "llama/kernels/x86/avx512_transpose.hpp"

namespace llama::detail {
namespace {

using namespace vnni;

// Rows per block: one per lane of the f32 results.
constexpr int kRows = 16;
// Groups whose x corrections fit the stack buffer; longer rows take row_dot.
constexpr int64_t kMaxGroups = 1024;

// The next block's scales (f32 [16, groups] at ws, 64 bytes per group), a
// line per group g, so that the gather of the block's first group does not
// wait on 16 lines from DRAM, a stall on every block's critical path.
LLAMA_VNNI inline void prefetch_scales(const float* ws, int64_t groups, int64_t g) {
  _mm_prefetch(reinterpret_cast<const char*>(ws + g * kRows), _MM_HINT_T2);
  // An unaligned block's last line.
  if (g + 1 == groups) {
    _mm_prefetch(reinterpret_cast<const char*>(ws + groups * kRows - 1), _MM_HINT_T2);
  }
}

// Where the block of rows [r, r + 16) starts, and the next block it
// prefetches meanwhile (the last block prefetches itself: no address past the
// tensor).
struct Block {
  const int8_t* values;       // i8 [16, cols]: row r's on
  const float* scales;        // f32 [16, groups]: row r's on
  const int8_t* next_values;  // the next block's
  const float* next_scales;
};

inline Block block_at(const QuantizedTensor& w, int64_t cols, int64_t groups, int64_t r) {
  const int8_t* wr = w.values.data() + r * cols;
  const float* ws = w.scales.data() + r * groups;
  const int64_t total_rows = cols > 0 ? static_cast<int64_t>(w.values.size()) / cols : 0;
  if (r + 2 * kRows > total_rows) return {wr, ws, wr, ws};
  return {wr, ws, wr + kRows * cols, ws + kRows * groups};
}

// sc[j * 16 + i] = ws[i * groups + g0 + j], the scales of groups [g0, g0 +
// 16) for the block's rows i < n (0 past them and past the last group): one
// transpose per 16 groups rather than a gather per group, whose 16 loads,
// each a different line, sit on the critical path.
LLAMA_VNNI inline void block_scales(const float* ws, int64_t groups, int64_t g0, int64_t n,
                                    float* sc) {
  const int64_t m = std::min<int64_t>(16, groups - g0);
  const auto in_row = static_cast<__mmask16>((1u << m) - 1);
  __m512 r[16];
  for (int i = 0; i < 16; ++i)
    r[i] = _mm512_maskz_loadu_ps(i < n ? in_row : 0, ws + i * groups + g0);
  avx512::transpose16(r);
  for (int j = 0; j < 16; ++j) _mm512_store_ps(sc + j * 16, r[j]);
}

// Rows [r, r + n), n <= 16, into out[0, n): for each group in order, the 16
// rows' int32 dots are summed lane per row (reduce16), corrected, and fed to
// 16 side-by-side f32 chains. corr[g] = 128 * sum of x's group g.
template <bool Tail>
LLAMA_VNNI inline void rows_dot(float* out, const QuantizedTensor& w, const Q8View& x,
                                const int32_t* corr, int64_t r, int64_t n) {
  const auto cols = static_cast<int64_t>(x.values.size());
  const int64_t gs = x.group_size, groups = cols / gs;
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  const auto rows = static_cast<__mmask16>(Tail ? (1u << n) - 1 : 0xffff);
  alignas(64) float sc[16 * 16];  // f32 [16 groups, 16 rows]: block_scales
  const auto [wr, ws, next, next_ws] = block_at(w, cols, groups, r);
  __m512 val = _mm512_setzero_ps();
  for (int64_t g = 0; g < groups; ++g) {
    prefetch_scales(next_ws, groups, g);
    if (g % 16 == 0) block_scales(ws, groups, g, Tail ? n : 16, sc);
    __m512i acc[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) acc[i] = _mm512_setzero_si512();
    // The block reads 16 rows a group at a time, which the hardware
    // prefetchers follow badly from DRAM; so the next block (the next 16 *
    // cols bytes) is fetched in order meanwhile, as many lines per group.
    // _MM_HINT_T2: the other hints are slower, and two blocks ahead gain
    // nothing.
    for (int64_t line = g * gs * 16; line < (g + 1) * gs * 16; line += 64) {
      _mm_prefetch(reinterpret_cast<const char*>(next + line), _MM_HINT_T2);
    }
    for (int64_t k = g * gs; k < (g + 1) * gs; k += 64) {
      const __m512i xv = _mm512_loadu_si512(x.values.data() + k);
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i) {
        // Rows past the end read nothing: (0 ^ 0x80) * x, never stored.
        const __mmask64 m = !Tail || i < n ? ~__mmask64{0} : 0;
        const __m512i wu = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, wr + i * cols + k), flip);
        acc[i] = _mm512_dpbusd_epi32(acc[i], wu, xv);
      }
    }
    const __m512i dots = _mm512_sub_epi32(reduce16(acc), _mm512_set1_epi32(corr[g]));
    const __m512 w_scale = _mm512_load_ps(sc + (g % 16) * 16);
    const __m512 scaled = _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(kFull16, dots), w_scale);
    val = _mm512_maskz_fmadd_ps(kFull16, scaled, _mm512_set1_ps(x.scales[static_cast<size_t>(g)]),
                                val);
  }
  _mm512_mask_storeu_ps(out, rows, val);
}

// val + float(dots - corr[g]) * w_scale * x_scale for group g of 16 rows
// (runq.c's step, lane per row; w_scale from block_scales).
LLAMA_VNNI inline __m512 group_step(__m512 val, __m512i dots, __m512 w_scale, const int32_t* corr,
                                    const Q8View& x, int64_t g) {
  const __m512 scaled = _mm512_mul_ps(
      _mm512_maskz_cvtepi32_ps(kFull16, _mm512_sub_epi32(dots, _mm512_set1_epi32(corr[g]))),
      w_scale);
  return _mm512_maskz_fmadd_ps(kFull16, scaled, _mm512_set1_ps(x.scales[static_cast<size_t>(g)]),
                               val);
}

// rows_dot for group size 32: each 64-byte step covers groups g and g + 1
// (an odd last group loads its 32 bytes alone), reduced into a lane per row
// for each, then fed to the chains in group order.
template <bool Tail>
LLAMA_VNNI inline void rows_dot32(float* out, const QuantizedTensor& w, const Q8View& x,
                                  const int32_t* corr, int64_t r, int64_t n) {
  const auto cols = static_cast<int64_t>(x.values.size());
  const int64_t groups = cols / 32;
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  const auto rows = static_cast<__mmask16>(Tail ? (1u << n) - 1 : 0xffff);
  alignas(64) float sc[16 * 16];  // f32 [16 groups, 16 rows]: block_scales
  const auto [wr, ws, next, next_ws] = block_at(w, cols, groups, r);
  __m512 val = _mm512_setzero_ps();
  for (int64_t g = 0; g < groups; g += 2) {
    prefetch_scales(next_ws, groups, g);
    if (g + 1 < groups) prefetch_scales(next_ws, groups, g + 1);
    if (g % 16 == 0) block_scales(ws, groups, g, Tail ? n : 16, sc);
    const bool pair = g + 1 < groups;
    const __mmask64 bytes = pair ? ~__mmask64{0} : first_bytes(32);
    for (int64_t line = g * 32 * 16; line < (g + 2) * 32 * 16 && line < 16 * cols; line += 64) {
      _mm_prefetch(reinterpret_cast<const char*>(next + line), _MM_HINT_T2);
    }
    const __m512i xv = _mm512_maskz_loadu_epi8(bytes, x.values.data() + g * 32);
    __m512i acc[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) {
      const __mmask64 m = !Tail || i < n ? bytes : 0;
      const __m512i wu = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, wr + i * cols + g * 32), flip);
      acc[i] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), wu, xv);
    }
    __m512i lo, hi;
    reduce16_halves(acc, lo, hi);
    val = group_step(val, lo, _mm512_load_ps(sc + (g % 16) * 16), corr, x, g);
    if (pair) val = group_step(val, hi, _mm512_load_ps(sc + (g % 16 + 1) * 16), corr, x, g + 1);
  }
  _mm512_mask_storeu_ps(out, rows, val);
}

}  // namespace

LLAMA_VNNI void q8_matvec_rows_vnni(std::span<float> out, const QuantizedTensor& w, const Q8View& x,
                                    int64_t row_begin, int64_t row_end) {
  const auto cols = static_cast<int64_t>(x.values.size());
  const int64_t gs = x.group_size, groups = cols / gs;
  if ((gs % 64 != 0 && gs != 32) || groups > kMaxGroups) {
    for (int64_t r = row_begin; r < row_end; ++r) {
      out[static_cast<size_t>(r - row_begin)] =
          row_dot(w.values.data() + r * cols, w.scales.data() + r * groups, x.values.data(),
                  x.scales.data(), cols, gs);
    }
    return;
  }
  alignas(64) int32_t corr[kMaxGroups];
  const __m512i ones = _mm512_set1_epi8(1);
  for (int64_t g = 0; g < groups; ++g) {
    __m512i acc = _mm512_setzero_si512();
    for (int64_t k = g * gs; k < (g + 1) * gs; k += 64) {
      acc = _mm512_dpbusd_epi32(
          acc, ones, _mm512_maskz_loadu_epi8(first_bytes((g + 1) * gs - k), x.values.data() + k));
    }
    corr[g] = 128 * reduce_add(acc);
  }
  float* o = out.data();
  int64_t r = row_begin;
  if (gs == 32) {
    for (; r + kRows <= row_end; r += kRows)
      rows_dot32<false>(o + (r - row_begin), w, x, corr, r, kRows);
    if (r < row_end) rows_dot32<true>(o + (r - row_begin), w, x, corr, r, row_end - r);
    return;
  }
  for (; r + kRows <= row_end; r += kRows)
    rows_dot<false>(o + (r - row_begin), w, x, corr, r, kRows);
  if (r < row_end) rows_dot<true>(o + (r - row_begin), w, x, corr, r, row_end - r);
}

}  // namespace llama::detail
