// Private to the core: AMX tile instructions for the amx-bf16 kernel
// (half_products_amx.cpp) and the amx-int8 one (int8_tiles_amx.cpp), as inline assembly with the
// memory effects stated. GCC 12's intrinsics (amxtileintrin.h) declare ldtilecfg as reading 8 bytes
// of its 64-byte configuration and tileloadd as reading no memory at all, so
// the compiler may sink the stores that fill a configuration or a tile's
// bytes past the instruction that reads them (seen: ldtilecfg faulted on a
// configuration whose stores had not yet been made). Every load and store
// here clobbers "memory"; tdpbf16ps and tilezero touch only tile registers.
//
// The caller checks the CPU (AMX-BF16 or AMX-INT8, and the tile data permission Linux
// grants through arch_prctl: cpu_features().amx_permitted) before any of
// these runs; the assembler needs no target attribute for them.
#pragma once

#include <cstdint>

namespace llama::detail::amx {

// Palette 1 (8 tiles of at most 16 rows of 64 bytes): bytes 0-15 the palette
// and start row (the rest reserved, zero), 16-47 each tile's bytes per row,
// 48-63 each tile's rows (Intel SDM, LDTILECFG).
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};
static_assert(sizeof(TileConfig) == 64);

// All 8 tiles at their largest: 16 rows of 64 bytes (16 f32 or 32 bf16).
inline TileConfig full_tiles() {
  TileConfig c;
  for (int i = 0; i < 8; ++i) {
    c.colsb[i] = 64;
    c.rows[i] = 16;
  }
  return c;
}

inline void load_config(const TileConfig& c) { asm volatile("ldtilecfg %0" ::"m"(c)); }

// Marks the tiles unused again, so the OS does not save 8 KiB of tile state
// at every context switch of a thread that has finished its products.
inline void release() { asm volatile("tilerelease" ::: "memory"); }

}  // namespace llama::detail::amx

// Tile register numbers are part of the instruction, hence macros. Strides in bytes.
#define LLAMA_AMX_LOAD(tmm, base, stride)                                               \
  asm volatile("tileloadd (%0,%1,1), %%tmm" #tmm ::"r"(static_cast<const void*>(base)), \
               "r"(static_cast<int64_t>(stride))                                        \
               : "memory")
#define LLAMA_AMX_STORE(tmm, base, stride)                                            \
  asm volatile("tilestored %%tmm" #tmm ", (%0,%1,1)" ::"r"(static_cast<void*>(base)), \
               "r"(static_cast<int64_t>(stride))                                      \
               : "memory")
#define LLAMA_AMX_ZERO(tmm) asm volatile("tilezero %%tmm" #tmm ::)
// tmm c (f32 16 x 16) += tmm a (bf16 16 x 32) . tmm b (bf16 pairs, 16 x 16 x 2).
#define LLAMA_AMX_DPBF16PS(c, a, b) asm volatile("tdpbf16ps %%tmm" #b ", %%tmm" #a ", %%tmm" #c ::)
// tmm c (i32 16 x 16) += tmm a (i8 16 x K) . tmm b (i8 quads, K / 4 x 16 x 4), signed x signed.
#define LLAMA_AMX_DPBSSD(c, a, b) asm volatile("tdpbssd %%tmm" #b ", %%tmm" #a ", %%tmm" #c ::)
