// The bf16/f16 product path for this CPU, numerics policy and kernel set, why
// it was chosen (--explain), and the batch layout each path reads.
#include "llama/kernels/dispatch/half_path.hpp"

#include "kernels/products/half_kernels.hpp"
#include "llama/error.hpp"
#include "llama/kernels/dispatch/bf16_unit.hpp"
#include "llama/kernels/dispatch/cpu_features.hpp"

namespace llama {
namespace {

// Each path reading a rounded batch and its layout: one table for both directions.
struct LayoutPath {
  Bf16Layout layout;
  HalfPath path;
};
constexpr LayoutPath kLayoutPaths[] = {{Bf16Layout::rows, HalfPath::onednn_bf16},
                                       {Bf16Layout::tiles, HalfPath::amx_bf16},
                                       {Bf16Layout::tiles_x3, HalfPath::amx_bf16x3}};

}  // namespace

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

HalfPath half_decode_path(KernelSet kernel) {
  // Every caller takes avx2 at the avx2 level, whatever its kernel set (the
  // avx2 set has no bf16/f16 body of its own, and the reference backend's
  // plain loops cannot be told from it), as an AVX-512 CPU without VNNI
  // takes avx512.
  if (simd_level() == SimdLevel::avx2 && half_path_available(HalfPath::avx2)) {
    return HalfPath::avx2;
  }
  if (simd_level() != SimdLevel::avx512 || !half_path_available(HalfPath::avx512)) {
    return HalfPath::portable;
  }
  // portable although the VNNI kernels run here: the caller's choice.
  if (kernel == KernelSet::portable && kernel_set_available(KernelSet::avx512_vnni)) {
    return HalfPath::portable;
  }
  return HalfPath::avx512;
}

HalfPath half_batch_path(BlockKind kind, KernelSet kernel, Numerics numerics) {
  // Exact follows decode's level: portable keeps decode's bits; avx2 and
  // avx512 run the f32 GEMM at that level. The avx2 level has no bf16 unit.
  const HalfPath decode = half_decode_path(kernel);
  if (decode == HalfPath::portable || decode == HalfPath::avx2) return decode;
  // The bf16 unit only where it is faster (dispatch/bf16_unit.hpp): elsewhere the
  // exact kernels win on speed as well as accuracy. Fast: AMX tiles where the
  // CPU has them, else oneDNN's AVX512-BF16 brgemm. Exact: AMX tiles on the
  // activations split into three exact bf16 planes, faster than the f32
  // GEMM there (three tile products a term; not worth it on vdpbf16ps).
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

bool batch_rounds_to_bf16(const Tensor& w, KernelSet kernel, Numerics numerics) {
  return w.dtype == DType::bf16 &&
         half_path_reads_bf16(half_batch_path(BlockKind::bf16, kernel, numerics));
}

std::string explain_half_decode_path(KernelSet kernel) {
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

std::string explain_half_batch_path(BlockKind kind, KernelSet kernel, Numerics numerics) {
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

const char* to_string(Bf16Layout layout) {
  switch (layout) {
    case Bf16Layout::tiles:
      return "tiles";
    case Bf16Layout::tiles_x3:
      return "tiles_x3";
    default:
      return "rows";
  }
}

HalfPath half_path_of(Bf16Layout layout) {
  for (const LayoutPath& lp : kLayoutPaths) {
    if (lp.layout == layout) return lp.path;
  }
  return HalfPath::onednn_bf16;
}

Bf16Layout bf16_layout(HalfPath path) {
  for (const LayoutPath& lp : kLayoutPaths) {
    if (lp.path == path) return lp.layout;
  }
  return Bf16Layout::rows;
}

Bf16Layout bf16_batch_layout(KernelSet kernel, Numerics numerics) {
  return bf16_layout(half_batch_path(BlockKind::bf16, kernel, numerics));
}

}  // namespace llama
