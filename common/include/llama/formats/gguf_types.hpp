// GGML's tensor types as GGUF files number them: the id, the name llama.cpp
// prints, and the block layout (values per block, bytes per block) that the
// container needs to size every tensor, whether or not we can compute with it.
#pragma once

#include <cstdint>
#include <string>

namespace llama::gguf {

// The ids of ggml.h (commit c392e5094). Ids 4, 5 and 31..33, 36..38 were
// removed from the format and are refused like any unknown id.
enum class TensorType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ2_XXS = 16,
  IQ2_XS = 17,
  IQ3_XXS = 18,
  IQ1_S = 19,
  IQ4_NL = 20,
  IQ3_S = 21,
  IQ2_S = 22,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  IQ1_M = 29,
  BF16 = 30,
  TQ1_0 = 34,
  TQ2_0 = 35,
};

struct TypeLayout {
  const char* name = nullptr;  // "F32", "Q4_K", ... (upper case, as llama-quantize names them)
  int64_t block_values = 0;    // values per block (1 for plain types)
  int64_t block_bytes = 0;     // bytes per block
};

// The layout of type id `id`, or nullptr when GGUF defines no such type.
const TypeLayout* type_layout(uint32_t id);
// "Q4_K", or "unknown type 31" for an id type_layout does not know.
std::string type_name(uint32_t id);
inline std::string type_name(TensorType t) { return type_name(static_cast<uint32_t>(t)); }

}  // namespace llama::gguf
