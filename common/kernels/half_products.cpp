// bf16/f16 products: path choice and the portable path (half_products.hpp);
// the SIMD paths are in half_products_avx512.cpp and half_products_avx2.cpp,
// the fast ones in half_products_amx.cpp and half_products_onednn.cpp behind
// their rounded batch (bf16_batch.cpp).
#include "llama/kernels/half_products.hpp"

#include <algorithm>

#include "half_kernels.hpp"
#include "llama/error.hpp"
#include "llama/kernels/bf16_unit.hpp"
#include "llama/kernels/cpu_features.hpp"
#include "llama/kernels/gemm_f32.hpp"
#include "llama/uninitialized_array.hpp"

namespace llama {

const char* to_string(HalfPath path) {
  switch (path) {
    case HalfPath::avx512:
      return "avx512-f32";
    case HalfPath::avx2:
      return "avx2-f32";
    case HalfPath::onednn_bf16:
      return "onednn-bf16";
    case HalfPath::amx_bf16:
      return "amx-bf16";
    case HalfPath::amx_bf16x3:
      return "amx-bf16x3";
    default:
      return "portable";
  }
}

bool half_path_is_fast(HalfPath path) {
  return path == HalfPath::onednn_bf16 || path == HalfPath::amx_bf16;
}

bool half_path_reads_bf16(HalfPath path) {
  return half_path_is_fast(path) || path == HalfPath::amx_bf16x3;
}

const char* half_path_requirement(HalfPath path) {
  switch (path) {
    case HalfPath::avx512:
      return "AVX-512 F/BW/VL";
    case HalfPath::avx2:
      return "AVX2, FMA and F16C";
    case HalfPath::onednn_bf16:
      return "AVX512-BF16 and oneDNN's avx512_core_bf16 ISA or above";
    case HalfPath::amx_bf16:
    case HalfPath::amx_bf16x3:
      return "AMX-BF16 tiles the OS lets this process use, and AVX512-BF16";
    default:
      return "";
  }
}

bool half_path_available(HalfPath path) {
  const bool avx512 = simd_level_supported(SimdLevel::avx512);
  switch (path) {
    case HalfPath::avx512:
      return avx512;
    case HalfPath::avx2:
      return simd_level_supported(SimdLevel::avx2);
    case HalfPath::onednn_bf16:  // the activations are rounded with AVX512-BF16
      return avx512 && cpu_features().avx512bf16 && detail::onednn_bf16_isa();
    case HalfPath::amx_bf16:
    case HalfPath::amx_bf16x3: {
      const CpuFeatures& f = cpu_features();
      return avx512 && f.avx512bf16 && f.amx_bf16 && f.os_tiles && f.amx_permitted;
    }
    default:
      return true;
  }
}

HalfPath half_decode_path(Q8Kernel kernel) {
  // The avx2 level has no int8 kernel of its own, so every caller's kernel
  // is portable there and the reference backend's plain loops cannot be told
  // from the best: all take avx2, as an AVX-512 CPU without VNNI takes avx512.
  if (simd_level() == SimdLevel::avx2 && half_path_available(HalfPath::avx2)) {
    return HalfPath::avx2;
  }
  if (simd_level() != SimdLevel::avx512 || !half_path_available(HalfPath::avx512)) {
    return HalfPath::portable;
  }
  // portable although the VNNI kernels run here: the caller's choice.
  if (kernel == Q8Kernel::portable && q8_kernel_available(Q8Kernel::avx512_vnni)) {
    return HalfPath::portable;
  }
  return HalfPath::avx512;
}

HalfPath half_batch_path(BlockKind kind, Q8Kernel kernel, Numerics numerics) {
  // Exact follows decode's level: portable keeps decode's bits; avx2 and
  // avx512 run the f32 GEMM at that level. The avx2 level has no bf16 unit.
  const HalfPath decode = half_decode_path(kernel);
  if (decode == HalfPath::portable || decode == HalfPath::avx2) return decode;
  // The bf16 unit only where it is faster (bf16_unit.hpp): elsewhere the
  // exact kernels win on speed as well as accuracy. Fast: AMX tiles where the
  // CPU has them, else oneDNN's AVX512-BF16 brgemm. Exact: AMX tiles on the
  // activations split into three exact bf16 planes, about twice the f32
  // GEMM's speed there (three tile products a term; not worth it on
  // vdpbf16ps).
  if (kind != BlockKind::bf16) return HalfPath::avx512;
  if (numerics == Numerics::exact) {
    return half_path_available(HalfPath::amx_bf16x3) && bf16_unit().faster ? HalfPath::amx_bf16x3
                                                                           : HalfPath::avx512;
  }
  if (bf16_unit().faster) {
    if (half_path_available(HalfPath::amx_bf16)) return HalfPath::amx_bf16;
    if (half_path_available(HalfPath::onednn_bf16)) return HalfPath::onednn_bf16;
  }
  return HalfPath::avx512;
}

bool batch_rounds_to_bf16(const Tensor& w, Q8Kernel kernel, Numerics numerics) {
  return w.dtype == DType::bf16 &&
         half_path_reads_bf16(half_batch_path(BlockKind::bf16, kernel, numerics));
}

std::string explain_half_decode_path(Q8Kernel kernel) {
  const HalfPath path = half_decode_path(kernel);
  if (path == HalfPath::avx512) {
    return "avx512-f32 (upcast in registers, f32 sums; AVX-512 F/BW/VL present)";
  }
  if (path == HalfPath::avx2) {
    return "avx2-f32 (upcast in registers, f32 sums, avx512-f32's bits; " + describe_simd_level() +
           ")";
  }
  if (simd_level() == SimdLevel::avx512) {
    return "portable (upcast, f32 sums; the plain loops were asked for)";
  }
  return "portable (upcast, f32 sums; " + describe_simd_level() + ")";
}

std::string explain_half_batch_path(BlockKind kind, Q8Kernel kernel, Numerics numerics) {
  const HalfPath path = half_batch_path(kind, kernel, numerics);
  const std::string policy = std::string(to_string(numerics)) + " numerics";
  if (path == HalfPath::amx_bf16x3) {
    return "amx-bf16x3 (hand-written AMX-BF16 tiles on the weights in place; " + policy +
           ": activations split exactly into three bf16 planes, the products exact, plane 0's "
           "sums and the others' added once; " +
           bf16_unit().why + ")";
  }
  if (path == HalfPath::amx_bf16) {
    return "amx-bf16 (hand-written AMX-BF16 tiles on the weights in place, a panel of 32 rows "
           "at a time in tile order; " +
           policy + ": activations rounded to bf16 once per batch in the tile layout; " +
           bf16_unit().why + ")";
  }
  if (path == HalfPath::onednn_bf16) {
    return std::string("onednn-bf16 (") + detail::onednn_description() + "; " + policy +
           ": activations rounded to bf16; " + bf16_unit().why +
           "; the CPU has AVX512-BF16, no AMX-BF16 tiles for amx-bf16)";
  }
  if (path == HalfPath::portable) {
    return "portable (" + policy + "; decode runs the portable kernels)";
  }
  const std::string why = std::string(to_string(path)) + " (" + policy;
  if (path == HalfPath::avx2) {
    const std::string unit =
        numerics == Numerics::fast ? ": the bf16 unit needs the avx512 level; " : "; ";
    return why + unit + "the f32 GEMM at the avx2 level on the weights widened exactly; " +
           describe_simd_level() + ")";
  }
  if (numerics == Numerics::fast) {
    if (kind != BlockKind::bf16) return why + ": f16 weights have no bf16 path)";
    if (!half_path_available(HalfPath::onednn_bf16) && !half_path_available(HalfPath::amx_bf16)) {
      return why + ": the CPU lacks " + half_path_requirement(HalfPath::onednn_bf16) + ")";
    }
    const Bf16UnitChoice unit = bf16_unit();
    if (unit.ratio > 0) {
      return why + ", but " + unit.why + ": exact kernels are faster; no AMX-BF16)";
    }
    return why + ", but " + unit.why + ": the exact kernels run)";
  }
  if (kind == BlockKind::bf16 && half_path_available(HalfPath::amx_bf16x3)) {
    return why +
           "; the f32 GEMM on the weights widened exactly; not amx-bf16x3: " + bf16_unit().why +
           ")";
  }
  return why + "; the f32 GEMM on the weights widened exactly)";
}

void half_matvec_rows(std::span<float> out, const BlockMatrix& w, std::span<const float> x,
                      int64_t row_begin, int64_t row_end, HalfPath path) {
  if (w.kind != BlockKind::bf16 && w.kind != BlockKind::f16) {
    throw Error(std::string("half_matvec_rows: ") + to_string(w.kind) + " weights");
  }
  if (path == HalfPath::portable) {
    blocks_matvec_rows_f32(out, w, x, row_begin, row_end, Q8Kernel::portable);
    return;
  }
  if ((path != HalfPath::avx512 && path != HalfPath::avx2) || !half_path_available(path)) {
    throw Error(std::string("half_matvec_rows: no ") + to_string(path) + " decode on this CPU");
  }
  if (row_end <= row_begin) return;
  if (static_cast<int64_t>(x.size()) < w.cols ||
      static_cast<int64_t>(out.size()) < row_end - row_begin) {
    throw Error("half_matvec_rows: buffers smaller than the product");
  }
  if (path == HalfPath::avx2) {
    detail::half_matvec_rows_avx2(out.data(), w, x.data(), row_begin, row_end);
  } else {
    detail::half_matvec_rows_avx512(out.data(), w, x.data(), row_begin, row_end);
  }
}

void half_matmat_rows(std::span<float> out, int64_t out_stride, const BlockMatrix& w,
                      std::span<const float> x, int64_t ld, int64_t n, int64_t row_begin,
                      int64_t row_end, HalfPath path) {
  if (w.kind != BlockKind::bf16 && w.kind != BlockKind::f16) {
    throw Error(std::string("half_matmat_rows: ") + to_string(w.kind) + " weights");
  }
  if (!half_path_available(path)) {
    throw Error(std::string("half_matmat_rows: this CPU lacks ") + half_path_requirement(path) +
                " for the " + to_string(path) + " path");
  }
  if (row_end <= row_begin || n <= 0) return;
  // The caller's spans must hold the last vector and the last result.
  if (static_cast<int64_t>(x.size()) < (n - 1) * ld + w.cols ||
      static_cast<int64_t>(out.size()) < (n - 1) * out_stride + row_end) {
    throw Error("half_matmat_rows: buffers smaller than the batch");
  }
  switch (path) {
    case HalfPath::avx512:
    case HalfPath::avx2:
      // The f32 model's batch product on the upcast weights: on an Intel Xeon
      // (model 207) 1.08-1.18x blas's sgemm prefill where register tiles
      // keeping decode's bits (16 lanes, horizontal sums) reached 0.73x.
      gemm_f32_rows(path == HalfPath::avx2 ? SimdLevel::avx2 : SimdLevel::avx512, out.data(),
                    out_stride, w.kind == BlockKind::bf16 ? GemmWeights::bf16 : GemmWeights::f16,
                    w.bytes.data(), x.data(), ld, w.cols, n, row_begin, row_end, nullptr, 0);
      return;
    case HalfPath::onednn_bf16:
    case HalfPath::amx_bf16:
    case HalfPath::amx_bf16x3: {
      if (w.kind != BlockKind::bf16) {
        throw Error(std::string("half_matmat_rows: the ") + to_string(path) +
                    " path takes bf16 weights, not F16");
      }
      // A caller without a rounded batch (tests, plugins): the vectors
      // rounded here for this call, then the one entry on a rounded batch.
      const Bf16Layout layout = bf16_layout(path);
      const auto count = static_cast<size_t>(bf16_batch_values(n, w.cols, layout));
      UninitializedArray<uint16_t> rounded(count);  // bf16 in `layout`
      const std::span<uint16_t> view(rounded.data(), count);
      round_batch_to_bf16(x, ld, w.cols, 0, n, view, layout);
      half_matmat_rows(out, out_stride, w, Bf16BatchView{view, bf16_batch_ld(w.cols), n, layout},
                       row_begin, row_end);
      return;
    }
    case HalfPath::portable:
      break;
  }
  // The decode kernel per (64-row tile, vector): each tile (128 KiB of bf16
  // at 1024 columns) stays in L2 while every vector passes over it.
  constexpr int64_t kTileRows = 64;
  const auto cols = static_cast<size_t>(w.cols);
  for (int64_t r0 = row_begin; r0 < row_end; r0 += kTileRows) {
    const int64_t r1 = std::min(row_end, r0 + kTileRows);
    for (int64_t t = 0; t < n; ++t) {
      blocks_matvec_rows_f32(
          out.subspan(static_cast<size_t>(t * out_stride + r0), static_cast<size_t>(r1 - r0)), w,
          x.subspan(static_cast<size_t>(t * ld), cols), r0, r1, Q8Kernel::portable);
    }
  }
}

}  // namespace llama
