// The AVX2 Q8_0 batch kernel (prefill): rows of W times a batch of quantized
// vectors with 8 tokens in the 8 int32 lanes of a ymm register; KernelSet::avx2's
// body, compiled again for AVX-VNNI by llama2c_int8_avx2_batch_avxvnni.cpp
// (x86/avx2_body.hpp).
//
// The batch is packed once per call: per block of 8 tokens and per 4 columns,
// one 32-byte vector holds each token's 4 values, and the x scales are
// transposed to [block, group, 8 tokens]. A weight row's 4 bytes are
// broadcast. Plain AVX2 multiplies |w| (u8) by x with w's sign: vpmaddubsw's
// pairs are then at most 2 x 128 x 127 and never saturate (x is within
// +-127). With AVX-VNNI, vpdpbusd has no int16 step, so the packed values are
// x + 128 (u8) times w and the accumulator starts at -128 * sum(w) of the
// group (one instruction per product instead of two). Either way the int32
// dot is exact. Then per lane the definition's float chain group by group,
// in Q8_0's order (val = fma(float(dot) * w_scale, x_scale, val), runq.c) or
// in GGUF Q4_0's (val = fma(float(dot), w_scale * x_scale, val)): 8 chains
// side by side, each one (row, token)'s own sequence, so results equal the
// portable kernels' bit for bit.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/products/llama2c_int8_kernels.hpp"
#include "kernels/x86/avx2_body.hpp"
#include "kernels/x86/tile_table.hpp"
#include "llama/uninitialized_array.hpp"

namespace llama::detail {
namespace {

// Below this many vectors a batch goes vector by vector: a block of 8 lanes
// would be mostly padding.
constexpr int64_t kMinBatch = 4;
// A tile is kRows weight rows x kBlocks blocks of 8 tokens: its kRows *
// kBlocks int32 accumulators, kBlocks packed vectors and the broadcast weights
// (plain AVX2: with |w|, a sign product and the int16 ones) fit the 16 ymm
// registers in the inner loop. (With AVX-VNNI 4 x 3 and 6 x 2 run about as
// fast, 2 x 3, 2 x 4 and 4 x 2 slower; plain AVX2 is about even among them.)
constexpr int kRows = 3;
constexpr int kBlocks = 3;
// Rows per pass over the whole batch: their results (f32 [rows, tokens]) stay
// in L1/L2 until stored.
constexpr int64_t kChunkRows = 64;
// Whether the packed values carry the +128 bias (vpdpbusd without int16 pairs).
constexpr bool kBiased = LLAMA_AVX2_BODY_VNNI != 0;

struct alignas(32) Bytes32 {
  uint8_t b[32];
};
struct alignas(32) Floats8 {
  float f[8];
};

// The batch with tokens in lanes.
struct Packed {
  int64_t tokens = 0, blocks = 0, quads = 0, groups = 0;  // quads = cols / 4
  UninitializedArray<Bytes32> values;  // i8 (AVX-VNNI: u8, x + 128) [blocks, quads, 8 tokens, 4]
  UninitializedArray<Floats8> scales;  // f32 [blocks, groups, 8 tokens]
};

// v[i] = column i of the 8 x 8 int32 matrix whose rows are v[0..7].
LLAMA_AVX2_BODY inline void transpose8(__m256i (&v)[8]) {
  __m256i t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_epi32(v[i], v[i + 1]);
    t[i + 1] = _mm256_unpackhi_epi32(v[i], v[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_unpacklo_epi64(t[i], t[i + 2]);
    u[i + 1] = _mm256_unpackhi_epi64(t[i], t[i + 2]);
    u[i + 2] = _mm256_unpacklo_epi64(t[i + 1], t[i + 3]);
    u[i + 3] = _mm256_unpackhi_epi64(t[i + 1], t[i + 3]);
  }
  for (int i = 0; i < 4; ++i) {
    v[i] = _mm256_permute2x128_si256(u[i], u[i + 4], 0x20);
    v[i + 4] = _mm256_permute2x128_si256(u[i], u[i + 4], 0x31);
  }
}

// Tokens [8 b, 8 b + 8) of `x` into block b: 32 columns of 8 tokens at a
// time, transposed as 8 x 8 int32, the last columns 4 at a time. A block
// short of 8 tokens repeats its first one: the extra lanes' results are never
// stored.
LLAMA_AVX2_BODY void pack(const Q8Batch& x, Packed& p) {
  const int64_t cols = x.cols;
  const __m256i bias = _mm256_set1_epi8(kBiased ? static_cast<char>(0x80) : 0);
  for (int64_t b = 0; b < p.blocks; ++b) {
    const int64_t here = std::min<int64_t>(8, x.n - 8 * b);
    const int8_t* src[8];
    for (int j = 0; j < 8; ++j) src[j] = x.values_of(8 * b + (j < here ? j : 0));
    Bytes32* out = p.values.data() + b * p.quads;
    int64_t c = 0;
    for (; c + 32 <= cols; c += 32) {
      __m256i v[8];
      for (int j = 0; j < 8; ++j) v[j] = load32(src[j] + c);
      transpose8(v);
      for (int i = 0; i < 8; ++i) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(out + c / 4 + i),
                           _mm256_xor_si256(v[i], bias));
      }
    }
    for (; c < cols; c += 4) {
      alignas(32) int32_t quad[8];
      for (int j = 0; j < 8; ++j) std::memcpy(quad + j, src[j] + c, 4);
      const __m256i v = _mm256_load_si256(reinterpret_cast<const __m256i*>(quad));
      _mm256_store_si256(reinterpret_cast<__m256i*>(out + c / 4), _mm256_xor_si256(v, bias));
    }
    Floats8* s = p.scales.data() + b * p.groups;
    for (int j = 0; j < 8; ++j) {
      const float* xs = x.scales_of(8 * b + (j < here ? j : 0));
      for (int64_t g = 0; g < p.groups; ++g) s[g].f[j] = xs[g];
    }
  }
}

// out[r * groups + g] = -128 * sum of group g of row r of w [rows, cols]
// (AVX-VNNI's accumulator start; exact in int32).
LLAMA_AVX2_BODY void minus_128_sums(const int8_t* w, int64_t rows, int64_t cols, int64_t gs,
                                    int32_t* out) {
  const int64_t total = rows * (cols / gs);
  const __m256i k128 = _mm256_set1_epi8(static_cast<char>(0x80));
  for (int64_t c = 0; c < total; ++c) {
    const int8_t* wg = w + c * gs;
    __m256i acc = _mm256_setzero_si256();
    int64_t k = 0;
    for (; k + 32 <= gs; k += 32) acc = dot_u8i8(acc, k128, load32(wg + k));
    alignas(32) int32_t lanes[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), acc);
    int32_t sum = 0;
    for (int i = 0; i < 8; ++i) sum += lanes[i];
    for (; k < gs; ++k) sum += 128 * int32_t{wg[k]};
    out[c] = -sum;
  }
}

// acc += the products of u (u8) and s (i8), 4 to a lane (dot_u8i8), in place:
// with AVX-VNNI's intrinsic GCC 12 copies every accumulator to a scratch
// register and back around each instruction.
LLAMA_AVX2_BODY inline void dot_in_place(__m256i& acc, __m256i u, __m256i s) {
#if LLAMA_AVX2_BODY_VNNI == 1
  asm("%{vex%} vpdpbusd %2, %1, %0" : "+x"(acc) : "x"(u), "x"(s));
#else
  acc = dot_u8i8(acc, u, s);
#endif
}

// What every tile of one call reads.
struct Job {
  const int8_t* w;        // i8 [rows, cols]
  const float* w_scales;  // f32 [rows, groups]
  const int32_t* comp;    // i32 [rows from row0, groups]: -128 * sum(w) per group (AVX-VNNI)
  const Packed* x;
  Floats8* res;  // f32 [rows from row0, blocks, 8 tokens]
  int64_t row0, cols, gs, groups;
};

// Rows [r0, r0 + R) x blocks [b0, b0 + B); kQ4: GGUF Q4_0's combine order.
template <bool kQ4, int R, int B>
LLAMA_AVX2_BODY void tile(const Job& j, int64_t r0, int64_t b0) {
  const Packed& p = *j.x;
  const int8_t* w[R];
  const float* ws[R];
  const int32_t* comp[R];
  for (int r = 0; r < R; ++r) {
    w[r] = j.w + (r0 + r) * j.cols;
    ws[r] = j.w_scales + (r0 + r) * j.groups;
    comp[r] = kBiased ? j.comp + (r0 - j.row0 + r) * j.groups : nullptr;
  }
  const Bytes32* xv = p.values.data() + b0 * p.quads;
  const Floats8* xs = p.scales.data() + b0 * p.groups;
  const int64_t per_group = j.gs / 4;
  __m256 val[R][B];
  for (int r = 0; r < R; ++r) {
    for (int b = 0; b < B; ++b) val[r][b] = _mm256_setzero_ps();
  }
  for (int64_t g = 0; g < j.groups; ++g) {
    __m256i acc[R][B];
    for (int r = 0; r < R; ++r) {
      const __m256i c = kBiased ? _mm256_set1_epi32(comp[r][g]) : _mm256_setzero_si256();
      for (int b = 0; b < B; ++b) acc[r][b] = c;
    }
    for (int64_t q = g * per_group; q < (g + 1) * per_group; ++q) {
      __m256i xq[B];
      for (int b = 0; b < B; ++b) {
        xq[b] = _mm256_load_si256(reinterpret_cast<const __m256i*>(xv + b * p.quads + q));
      }
      for (int r = 0; r < R; ++r) {
        int32_t quad;
        std::memcpy(&quad, w[r] + 4 * q, 4);
        const __m256i wq = _mm256_set1_epi32(quad);
        if constexpr (kBiased) {
          for (int b = 0; b < B; ++b) dot_in_place(acc[r][b], xq[b], wq);
        } else {
          const __m256i wabs = _mm256_sign_epi8(wq, wq);
          for (int b = 0; b < B; ++b) {
            dot_in_place(acc[r][b], wabs, _mm256_sign_epi8(xq[b], wq));
          }
        }
      }
    }
    for (int r = 0; r < R; ++r) {
      const __m256 s = _mm256_set1_ps(ws[r][g]);
      for (int b = 0; b < B; ++b) {
        const __m256 dot = _mm256_cvtepi32_ps(acc[r][b]);
        const __m256 x_scale = _mm256_load_ps(xs[b * p.groups + g].f);
        val[r][b] = kQ4 ? _mm256_fmadd_ps(dot, _mm256_mul_ps(s, x_scale), val[r][b])
                        : _mm256_fmadd_ps(_mm256_mul_ps(dot, s), x_scale, val[r][b]);
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int b = 0; b < B; ++b) {
      _mm256_store_ps(j.res[(r0 - j.row0 + r) * p.blocks + b0 + b].f, val[r][b]);
    }
  }
}

// res [rows, blocks, 8 tokens] into out[t * out_stride + r]: 8 rows x 8
// tokens at a time, transposed in registers, so each token's rows are one
// store (out's rows are often 4 KiB apart: stores of single floats to them
// would fight over a few cache sets); the last rows one by one.
LLAMA_AVX2_BODY void store(const Floats8* res, const Packed& p, int64_t rows, float* out,
                           int64_t out_stride) {
  int64_t r0 = 0;
  for (; r0 + 8 <= rows; r0 += 8) {
    for (int64_t b = 0; b < p.blocks; ++b) {
      __m256i v[8];
      for (int r = 0; r < 8; ++r) {
        v[r] = _mm256_load_si256(reinterpret_cast<const __m256i*>(res[(r0 + r) * p.blocks + b].f));
      }
      transpose8(v);
      const int64_t tokens = std::min<int64_t>(8, p.tokens - 8 * b);
      for (int64_t t = 0; t < tokens; ++t) {
        _mm256_storeu_ps(out + (8 * b + t) * out_stride + r0, _mm256_castsi256_ps(v[t]));
      }
    }
  }
  for (; r0 < rows; ++r0) {
    for (int64_t t = 0; t < p.tokens; ++t) {
      out[t * out_stride + r0] = res[r0 * p.blocks + t / 8].f[t % 8];
    }
  }
}

// Q4_0's definition, (row, token) by (row, token): for the calls the tiles do
// not take. (Q8_0's order has a vector body of its own, the decode kernel.)
void one_by_one_q4(std::span<float> out, int64_t out_stride, const QuantizedTensor& w,
                   const Q8Batch& x, int64_t row_begin, int64_t row_end) {
  const int64_t cols = x.cols, gs = x.group_size, groups = cols / gs;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int8_t* wr = w.values.data() + r * cols;
    const float* ws = w.scales.data() + r * groups;
    for (int64_t t = 0; t < x.n; ++t) {
      const int8_t* xv = x.values_of(t);
      const float* xs = x.scales_of(t);
      float val = 0.0f;
      for (int64_t g = 0; g < groups; ++g) {
        int32_t dot = 0;
        for (int64_t k = g * gs; k < (g + 1) * gs; ++k) dot += int32_t{wr[k]} * int32_t{xv[k]};
        val = std::fma(static_cast<float>(dot), ws[g] * xs[g], val);
      }
      out[size_t(t * out_stride + r)] = val;
    }
  }
}

using TileFn = void (*)(const Job&, int64_t, int64_t);

// kTiles<kQ4>[R - 1][B - 1] is tile<kQ4, R, B>: the edges of a call take smaller tiles.
template <bool kQ4>
constexpr auto kTiles = tile_table<TileFn, kRows, kBlocks>([]<int R, int B>() -> TileFn {
  return &tile<kQ4, R, B>;
});

template <bool kQ4>
LLAMA_AVX2_BODY void matmat(std::span<float> out, int64_t out_stride, const QuantizedTensor& w,
                            const Q8Batch& x, int64_t row_begin, int64_t row_end) {
  const int64_t cols = x.cols, gs = x.group_size, groups = cols / gs, n = x.n;
  if (row_end <= row_begin) return;
  if (gs % 4 != 0 || n < kMinBatch) {
    // Groups that split a 4-byte lane, or too few vectors to fill the lanes
    // (a server's few sequences decoding together): vector by vector.
    if constexpr (kQ4) {
      one_by_one_q4(out, out_stride, w, x, row_begin, row_end);
    } else {
      const auto matvec = &LLAMA_AVX2_BODY_NAME(q8_matvec_rows);  // this body's decode kernel
      for (int64_t t = 0; t < n; ++t) {
        const Q8View xt({x.values_of(t), size_t(cols)}, {x.scales_of(t), size_t(groups)}, gs);
        matvec(out.subspan(size_t(t * out_stride + row_begin), size_t(row_end - row_begin)), w, xt,
               row_begin, row_end);
      }
    }
    return;
  }
  // Buffers per call, as the AVX-512 kernel's: the packing belongs to the
  // call (nothing to keep between calls or threads), and after the first
  // call glibc serves a buffer of this size from its heap rather than
  // mapping fresh pages (it raises its mmap threshold to a freed mapping's
  // size), so no call pays page zeroing.
  Packed p;
  p.tokens = n;
  p.blocks = (n + 7) / 8;
  p.quads = cols / 4;
  p.groups = groups;
  // Every element is written before it is read: no fill.
  p.values = UninitializedArray<Bytes32>(size_t(p.blocks * p.quads));
  p.scales = UninitializedArray<Floats8>(size_t(p.blocks * groups));
  pack(x, p);
  const int64_t chunk = std::min<int64_t>(kChunkRows, row_end - row_begin);
  UninitializedArray<int32_t> comp(kBiased ? size_t(chunk * groups) : 0);
  UninitializedArray<Floats8> res(size_t(chunk * p.blocks));
  Job job{w.values.data(), w.scales.data(), comp.data(), &p, res.data(), 0, cols, gs, groups};
  for (int64_t c0 = row_begin; c0 < row_end; c0 += chunk) {
    const int64_t c1 = std::min(row_end, c0 + chunk);
    if constexpr (kBiased)
      minus_128_sums(w.values.data() + c0 * cols, c1 - c0, cols, gs, comp.data());
    job.row0 = c0;
    for (int64_t r0 = c0; r0 < c1; r0 += kRows) {
      const auto rows = static_cast<size_t>(std::min<int64_t>(kRows, c1 - r0));
      for (int64_t b0 = 0; b0 < p.blocks; b0 += kBlocks) {
        const auto blocks = static_cast<size_t>(std::min<int64_t>(kBlocks, p.blocks - b0));
        kTiles<kQ4>[rows - 1][blocks - 1](job, r0, b0);
      }
    }
    store(res.data(), p, c1 - c0, out.data() + c0, out_stride);
  }
}

}  // namespace

LLAMA_AVX2_BODY void LLAMA_AVX2_BODY_NAME(q8_matmat_rows)(std::span<float> out, int64_t out_stride,
                                                          const QuantizedTensor& w,
                                                          const Q8Batch& x, int64_t row_begin,
                                                          int64_t row_end) {
  matmat<false>(out, out_stride, w, x, row_begin, row_end);
}

LLAMA_AVX2_BODY void LLAMA_AVX2_BODY_NAME(q8_matmat_rows_q4_order)(
    std::span<float> out, int64_t out_stride, const QuantizedTensor& w, const Q8Batch& x,
    int64_t row_begin, int64_t row_end) {
  matmat<true>(out, out_stride, w, x, row_begin, row_end);
}

}  // namespace llama::detail
