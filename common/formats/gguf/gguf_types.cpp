// The block layouts of GGML's tensor types (ggml-common.h's block structs at
// commit c392e5094, written out as byte counts).
#include "llama/formats/gguf_types.hpp"

#include <array>

namespace llama::gguf {
namespace {

constexpr int64_t kK = 256;  // QK_K: values per K-quant super-block

// Indexed by id; entries with a null name are ids the format does not define.
constexpr std::array<TypeLayout, 36> kLayouts = {{
    {"F32", 1, 4},                        // 0
    {"F16", 1, 2},                        // 1
    {"Q4_0", 32, 2 + 16},                 // 2: f16 d, 32 nibbles
    {"Q4_1", 32, 2 + 2 + 16},             // 3: f16 d, f16 m, 32 nibbles
    {},                                   // 4: Q4_2, removed
    {},                                   // 5: Q4_3, removed
    {"Q5_0", 32, 2 + 4 + 16},             // 6
    {"Q5_1", 32, 2 + 2 + 4 + 16},         // 7
    {"Q8_0", 32, 2 + 32},                 // 8: f16 d, 32 int8
    {"Q8_1", 32, 2 + 2 + 32},             // 9
    {"Q2_K", kK, 2 + 2 + 16 + 64},        // 10
    {"Q3_K", kK, 32 + 64 + 12 + 2},       // 11
    {"Q4_K", kK, 2 + 2 + 12 + 128},       // 12: f16 d, f16 dmin, 6-bit scales, nibbles
    {"Q5_K", kK, 2 + 2 + 12 + 32 + 128},  // 13
    {"Q6_K", kK, 128 + 64 + 16 + 2},      // 14: low nibbles, high 2 bits, int8 scales, f16 d
    {"Q8_K", kK, 4 + 256 + 32},           // 15
    {"IQ2_XXS", kK, 2 + 64},              // 16
    {"IQ2_XS", kK, 2 + 64 + 8},           // 17
    {"IQ3_XXS", kK, 2 + 96},              // 18
    {"IQ1_S", kK, 2 + 32 + 16},           // 19
    {"IQ4_NL", 32, 2 + 16},               // 20
    {"IQ3_S", kK, 2 + 64 + 32 + 8 + 4},   // 21
    {"IQ2_S", kK, 2 + 64 + 16},           // 22
    {"IQ4_XS", kK, 2 + 2 + 4 + 128},      // 23
    {"I8", 1, 1},                         // 24
    {"I16", 1, 2},                        // 25
    {"I32", 1, 4},                        // 26
    {"I64", 1, 8},                        // 27
    {"F64", 1, 8},                        // 28
    {"IQ1_M", kK, 32 + 16 + 8},           // 29
    {"BF16", 1, 2},                       // 30
    {},                                   // 31: Q4_0_4_4, removed
    {},                                   // 32: Q4_0_4_8, removed
    {},                                   // 33: Q4_0_8_8, removed
    {"TQ1_0", kK, 48 + 4 + 2},            // 34
    {"TQ2_0", kK, 64 + 2},                // 35
}};

}  // namespace

const TypeLayout* type_layout(uint32_t id) {
  if (id >= kLayouts.size() || kLayouts[id].name == nullptr) return nullptr;
  return &kLayouts[id];
}

std::string type_name(uint32_t id) {
  const TypeLayout* t = type_layout(id);
  return t != nullptr ? t->name : "unknown type " + std::to_string(id);
}

}  // namespace llama::gguf
