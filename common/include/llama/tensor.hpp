// Typed tensor views: a tensor's name, dtype, shape and bytes, read in place
// from a file mapping (or an owned copy) without conversion. Every format's
// reader describes its weights with these, and every backend reads them, so a
// new dtype is a row in the dtype table plus its kernels (common/kernels/),
// not a member in every struct.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

namespace llama {

// Element types of weights. Float types convert to f32 exactly. Block types
// store each row as whole blocks of `block_values` values in `block_bytes`
// bytes (GGUF's types join here: block_q8_0, q4_0, q4_k, q6_k, q4_1, q5_0, q5_1, q5_k, q3_k, q2_k).
enum class DType : uint8_t {
  f32,
  bf16,
  f16,
  // llama2.c's Q8_0 (export.py version 2): int8 values [rows, cols] in `data`
  // and, stored apart, f32 scales [rows * cols / group_size] in `scales`:
  // value i is data[i] * scales[i / group_size]. Every row holds whole groups.
  q8_0,
  // GGUF's block types, ggml's layouts (kernels/numbers/gguf_blocks.hpp), read in place:
  block_q8_0,  // 32 int8 with an f16 scale: 34 bytes per 32 values
  q4_0,        // 32 4-bit codes with an f16 scale: 18 bytes per 32 values
  q4_k,        // super-blocks of 256 (8 x 32, 6-bit scales and mins): 144 bytes
  q6_k,        // super-blocks of 256 (16 x 16, int8 scales): 210 bytes
  q4_1,  // 32 4-bit codes with f16 scale and min: 20 bytes (kernels/numbers/legacy_blocks.hpp)
  q5_0,  // 32 5-bit codes with an f16 scale: 22 bytes
  q5_1,  // 32 5-bit codes with f16 scale and min: 24 bytes
  q5_k,  // super-blocks of 256 (8 x 32, 6-bit scales and mins, 5-bit codes): 176 bytes
  q3_k,  // super-blocks of 256 (16 x 16, 6-bit scales, 3-bit codes): 110 bytes
  q2_k,  // super-blocks of 256 (16 x 16, 4-bit scales and mins, 2-bit codes): 84 bytes
};
inline constexpr int kDTypeCount = 14;

struct DTypeInfo {
  const char* name;      // "f32", "bf16", "f16", "q8_0", "block_q8_0", "q4_0", "q4_k", "q6_k", ...
  int64_t block_values;  // values per block of `data` (1 for the float types and q8_0)
  int64_t block_bytes;   // bytes per block of `data`
  bool is_float;         // f32, bf16, f16: converts to f32 exactly, value by value
};
const DTypeInfo& dtype_info(DType dtype);
const char* to_string(DType dtype);

// A set of dtypes, e.g. what a backend runs.
class DTypeSet {
 public:
  constexpr DTypeSet() = default;
  constexpr DTypeSet(std::initializer_list<DType> dtypes) {
    for (DType d : dtypes) bits_ |= bit(d);
  }
  constexpr bool contains(DType d) const { return (bits_ & bit(d)) != 0; }
  constexpr DTypeSet& add(DType d) {
    bits_ |= bit(d);
    return *this;
  }
  constexpr bool empty() const { return bits_ == 0; }
  std::string to_string() const;    // "f32, bf16, f16, q8_0"
  std::vector<DType> list() const;  // in enum order
  static DTypeSet all();            // every dtype the core knows

 private:
  static constexpr uint32_t bit(DType d) { return uint32_t{1} << static_cast<unsigned>(d); }
  uint32_t bits_ = 0;
};

struct Tensor {
  std::string name;  // as its file names it: "wq[3]", "model.layers.3.self_attn.q_proj.weight"
  DType dtype = DType::f32;
  // Outermost first: matrices [rows, cols], row-major (y = W x); vectors [n].
  std::vector<int64_t> shape;
  // The values in `dtype`, row after row: rows() * row_bytes(cols()) bytes.
  std::span<const std::byte> data;
  // q8_0 only: f32 [elements / group_size] group scales; empty otherwise.
  std::span<const std::byte> scales;
  int64_t group_size = 0;  // q8_0 only: values per scale

  bool empty() const { return shape.empty(); }
  int64_t elements() const;  // product of the shape (checked when the view was made)
  int64_t cols() const { return shape.empty() ? 0 : shape.back(); }
  int64_t rows() const;  // elements / cols: 1 for a vector
  // Bytes of `n` values of this tensor's dtype in `data` (n a multiple of the block).
  int64_t row_bytes(int64_t n) const;

  // Typed views of the bytes; each throws Error naming the tensor unless the
  // dtype matches and the bytes are aligned for the element type.
  std::span<const float> f32() const;         // dtype f32
  std::span<const uint16_t> u16() const;      // dtype bf16 or f16 (2-byte aligned): raw bits
  std::span<const int8_t> q8_values() const;  // dtype q8_0
  std::span<const float> q8_scales() const;   // dtype q8_0

  // "[64x64]" or "[64]".
  std::string shape_string() const;
  // "wq[0] q8_0 (groups of 64) [64x64]".
  std::string describe() const;

  // Views of memory held elsewhere (the caller keeps it alive), checked:
  // throw Error naming `name` when the shape is empty, not positive, overflows,
  // or disagrees with the byte counts.
  static Tensor view(std::string name, DType dtype, std::vector<int64_t> shape,
                     std::span<const std::byte> data);
  static Tensor f32_view(std::string name, std::vector<int64_t> shape, std::span<const float> data);
  static Tensor q8_view(std::string name, std::vector<int64_t> shape,
                        std::span<const int8_t> values, std::span<const float> scales,
                        int64_t group_size);
};

// A Q8_0 matrix as the int8 kernels read it: value i is values[i] *
// scales[i / group_size]. Every row holds whole groups.
struct QuantizedTensor {
  std::span<const int8_t> values;  // i8 [rows, cols]
  std::span<const float> scales;   // f32 [rows * cols / group_size]
  int64_t group_size = 0;
  // The kernels' view of a q8_0 Tensor (throws Error for another dtype).
  static QuantizedTensor of(const Tensor& t) {
    return {t.q8_values(), t.q8_scales(), t.group_size};
  }
};

}  // namespace llama
