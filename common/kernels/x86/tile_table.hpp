// A register-tile kernel's table of shapes: tile_table<Fn, kA, kB>(pick)[a - 1][b - 1]
// is pick<a, b>(), the kernel compiled for an a x b tile. A batch kernel runs
// its full shape in the interior and looks up the smaller shape it needs at
// the edges of a call (the last rows, the last tokens), each one a fully
// unrolled kernel of its own rather than a loop with run-time bounds.
#pragma once

#include <array>
#include <cstddef>
#include <utility>

namespace llama::detail {

// pick is a lambda templated on two ints that returns a Fn, e.g.
//   []<int R, int T>() -> TileFn { return &tile<R, T>; }
template <typename Fn, int kA, int kB, typename Pick>
constexpr std::array<std::array<Fn, kB>, kA> tile_table(Pick pick) {
  const auto row = [&]<size_t a, size_t... b>(std::index_sequence<b...>) {
    return std::array<Fn, kB>{pick.template operator()<int(a) + 1, int(b) + 1>()...};
  };
  return [&]<size_t... a>(std::index_sequence<a...>) {
    return std::array<std::array<Fn, kB>, kA>{
        row.template operator()<a>(std::make_index_sequence<kB>{})...};
  }
  (std::make_index_sequence<kA>{});
}

}  // namespace llama::detail
