// The AMX-INT8 int8 batch kernel (int8_tiles_kernel.hpp) on the CPU's tiles:
// q8_matmat_rows for KernelSet::avx512_vnni where the CPU has AMX-INT8 and
// Linux granted the tile state (amx_int8_enabled), in runq.c's chain and in
// GGUF Q4_0's.
#include "kernels/x86/int8_tiles_kernel.hpp"

namespace llama::detail {
namespace {

// The tile instructions int8_tiles::matmat asks for (its tile numbers: sums
// 0 and 1, weights 4, batch 6).
struct AmxInt8Tiles {
  void configure(const amx::TileConfig& c) { amx::load_config(c); }
  void zero(int c) {
    if (c == 0) {
      LLAMA_AMX_ZERO(0);
    } else {
      LLAMA_AMX_ZERO(1);
    }
  }
  void load_weights(const int8_t* w, int64_t stride) { LLAMA_AMX_LOAD(4, w, stride); }
  void load_batch(const void* x) { LLAMA_AMX_LOAD(6, x, 64); }
  void multiply(int c) {
    if (c == 0) {
      LLAMA_AMX_DPBSSD(0, 4, 6);
    } else {
      LLAMA_AMX_DPBSSD(1, 4, 6);
    }
  }
  void store(int c, int32_t* dots) {
    if (c == 0) {
      LLAMA_AMX_STORE(0, dots, 64);
    } else {
      LLAMA_AMX_STORE(1, dots, 64);
    }
  }
  void release() { amx::release(); }
};

}  // namespace

LLAMA_VNNI void q8_matmat_rows_amx(std::span<float> out, int64_t out_stride,
                                   const QuantizedTensor& w, const Q8Batch& x, int64_t row_begin,
                                   int64_t row_end) {
  AmxInt8Tiles tiles;
  int8_tiles::matmat<AmxInt8Tiles, int8_tiles::Chain::runq_c>(tiles, out.data(), out_stride, w, x,
                                                              row_begin, row_end);
}

LLAMA_VNNI void q8_matmat_rows_q4_order_amx(std::span<float> out, int64_t out_stride,
                                            const QuantizedTensor& w, const Q8Batch& x,
                                            int64_t row_begin, int64_t row_end) {
  AmxInt8Tiles tiles;
  int8_tiles::matmat<AmxInt8Tiles, int8_tiles::Chain::q4_0>(tiles, out.data(), out_stride, w, x,
                                                            row_begin, row_end);
}

}  // namespace llama::detail
