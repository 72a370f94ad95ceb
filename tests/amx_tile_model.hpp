// A model of the AMX tile instructions the int8 tile kernel uses
// (kernels/x86/int8_tiles_kernel.hpp's Tiles), written from the Intel SDM's
// definitions of LDTILECFG, TILEZERO, TILELOADD, TDPBSSD, TILESTORED and
// TILERELEASE: it keeps the configured shape of each tile and refuses (throws)
// what the CPU would fault on or not do as the kernel means: a tile used
// unconfigured, shapes that do not chain (A's bytes a row = 4 x B's rows, C's
// rows = A's, C's bytes a row = B's), more than 16 rows or 64 bytes a row.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/x86/amx_tiles.hpp"

namespace llama::test {

class AmxTileModel {
 public:
  void configure(const detail::amx::TileConfig& c) {
    if (c.palette != 1 || c.start_row != 0) throw std::logic_error("tile config: palette 1 only");
    for (int t = 0; t < 8; ++t) {
      if (c.rows[t] > 16 || c.colsb[t] > 64 || (c.rows[t] == 0) != (c.colsb[t] == 0)) {
        throw std::logic_error("tile config: tile " + std::to_string(t) + " has a bad shape");
      }
    }
    config_ = c;
    configured_ = true;
    for (auto& tile : tiles_) tile.fill(0);
    ++configures;
  }
  void zero(int c) { tile(sum_tile(c)).fill(0); }
  void load_weights(const int8_t* w, int64_t stride) { load(4, w, stride); }
  void load_batch(const void* x) { load(6, x, 64); }
  // tmm c += tmm4 . tmm6, signed bytes, int32 sums wrapping as the CPU's.
  void multiply(int c) {
    const int t = sum_tile(c);
    const int m_rows = config_.rows[t], n = config_.colsb[t] / 4, k = config_.colsb[4] / 4;
    if (config_.rows[4] != m_rows || config_.rows[6] != k || config_.colsb[6] != config_.colsb[t]) {
      throw std::logic_error("tdpbssd: the tile shapes do not chain");
    }
    auto& cc = tile(t);
    const auto& a = tile(4);
    const auto& b = tile(6);
    for (int m = 0; m < m_rows; ++m) {
      for (int j = 0; j < n; ++j) {
        uint32_t acc;
        std::memcpy(&acc, &cc[m * 64 + 4 * j], 4);
        for (int q = 0; q < k; ++q) {
          for (int i = 0; i < 4; ++i) {
            const int32_t prod = int32_t{static_cast<int8_t>(a[m * 64 + 4 * q + i])} *
                                 int32_t{static_cast<int8_t>(b[q * 64 + 4 * j + i])};
            acc += static_cast<uint32_t>(prod);
          }
        }
        std::memcpy(&cc[m * 64 + 4 * j], &acc, 4);
      }
    }
    ++multiplies;
  }
  void store(int c, int32_t* dots) {
    const int t = sum_tile(c);
    for (int m = 0; m < config_.rows[t]; ++m) {
      std::memcpy(reinterpret_cast<uint8_t*>(dots) + m * 64, &tile(t)[m * 64], config_.colsb[t]);
    }
  }
  void release() {
    configured_ = false;
    ++releases;
  }

  int64_t configures = 0, multiplies = 0, releases = 0;

 private:
  static int sum_tile(int c) {
    if (c != 0 && c != 1) throw std::logic_error("sum tile " + std::to_string(c));
    return c;
  }
  std::array<uint8_t, 1024>& tile(int t) {
    if (!configured_ || config_.rows[t] == 0) {
      throw std::logic_error("tile " + std::to_string(t) + " used unconfigured");
    }
    return tiles_[t];
  }
  // TILELOADD: each configured row's bytes from base + row * stride; the rest zero.
  void load(int t, const void* base, int64_t stride) {
    auto& dst = tile(t);
    dst.fill(0);
    for (int m = 0; m < config_.rows[t]; ++m) {
      std::memcpy(&dst[m * 64], static_cast<const uint8_t*>(base) + m * stride, config_.colsb[t]);
    }
  }

  detail::amx::TileConfig config_;
  bool configured_ = false;
  std::array<std::array<uint8_t, 1024>, 8> tiles_{};
};

}  // namespace llama::test
