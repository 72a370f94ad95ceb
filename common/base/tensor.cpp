// The dtype table and checked tensor views.
#include "llama/tensor.hpp"

#include <array>

#include "llama/checked_math.hpp"
#include "llama/error.hpp"

namespace llama {
namespace {

constexpr std::array<DTypeInfo, kDTypeCount> kDTypes = {{
    {"f32", 1, 4, true},
    {"bf16", 1, 2, true},
    {"f16", 1, 2, true},
    {"q8_0", 1, 1, false},  // the int8 values; the f32 scales are apart
    {"block_q8_0", 32, 34, false},
    {"q4_0", 32, 18, false},
    {"q4_k", 256, 144, false},
    {"q6_k", 256, 210, false},
    {"q4_1", 32, 20, false},
    {"q5_0", 32, 22, false},
    {"q5_1", 32, 24, false},
    {"q5_k", 256, 176, false},
    {"q3_k", 256, 110, false},
    {"q2_k", 256, 84, false},
}};

int64_t checked_elements(const std::string& name, const std::vector<int64_t>& shape) {
  if (shape.empty()) throw Error("tensor " + name + ": empty shape");
  int64_t n = 1;
  for (const int64_t d : shape) {
    if (d <= 0) {
      throw Error("tensor " + name + ": dimension " + std::to_string(d) + " is not positive");
    }
    n = checked_mul(n, d, "tensor " + name);
  }
  return n;
}

template <typename T>
std::span<const T> typed(const Tensor& t, std::span<const std::byte> bytes, const char* what) {
  if (reinterpret_cast<uintptr_t>(bytes.data()) % alignof(T) != 0) {
    throw Error("tensor " + t.name + ": " + what + " are not " + std::to_string(alignof(T)) +
                "-byte aligned");
  }
  return {reinterpret_cast<const T*>(bytes.data()), bytes.size() / sizeof(T)};
}

void require_dtype(const Tensor& t, bool ok, const char* wanted) {
  if (!ok) {
    throw Error("tensor " + t.name + " is " + to_string(t.dtype) + ", read as " + wanted);
  }
}

}  // namespace

const DTypeInfo& dtype_info(DType dtype) {
  const auto i = static_cast<size_t>(dtype);
  if (i >= kDTypes.size()) throw Error("unknown dtype " + std::to_string(i));
  return kDTypes[i];
}

const char* to_string(DType dtype) { return dtype_info(dtype).name; }

std::string DTypeSet::to_string() const {
  std::string s;
  for (int i = 0; i < kDTypeCount; ++i) {
    const auto d = static_cast<DType>(i);
    if (!contains(d)) continue;
    if (!s.empty()) s += ", ";
    s += llama::to_string(d);
  }
  return s.empty() ? "nothing" : s;
}

std::vector<DType> DTypeSet::list() const {
  std::vector<DType> out;
  for (int i = 0; i < kDTypeCount; ++i) {
    if (contains(static_cast<DType>(i))) out.push_back(static_cast<DType>(i));
  }
  return out;
}

DTypeSet DTypeSet::all() {
  DTypeSet s;
  for (int i = 0; i < kDTypeCount; ++i) s.add(static_cast<DType>(i));
  return s;
}

int64_t Tensor::elements() const {
  int64_t n = shape.empty() ? 0 : 1;
  for (const int64_t d : shape) n *= d;  // checked when the view was made
  return n;
}

int64_t Tensor::rows() const { return cols() > 0 ? elements() / cols() : 0; }

int64_t Tensor::row_bytes(int64_t n) const {
  const DTypeInfo& info = dtype_info(dtype);
  return n / info.block_values * info.block_bytes;
}

std::span<const float> Tensor::f32() const {
  require_dtype(*this, dtype == DType::f32, "f32");
  return typed<float>(*this, data, "f32 values");
}

std::span<const uint16_t> Tensor::u16() const {
  require_dtype(*this, dtype == DType::bf16 || dtype == DType::f16, "bf16 or f16");
  return typed<uint16_t>(*this, data, "16-bit values");
}

std::span<const int8_t> Tensor::q8_values() const {
  require_dtype(*this, dtype == DType::q8_0, "q8_0");
  return typed<int8_t>(*this, data, "int8 values");
}

std::span<const float> Tensor::q8_scales() const {
  require_dtype(*this, dtype == DType::q8_0, "q8_0");
  return typed<float>(*this, scales, "q8_0 scales");
}

std::string Tensor::shape_string() const {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += 'x';
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::string Tensor::describe() const {
  std::string s = name + " " + to_string(dtype);
  if (dtype == DType::q8_0) s += " (groups of " + std::to_string(group_size) + ")";
  return s + " " + shape_string();
}

Tensor Tensor::view(std::string name, DType dtype, std::vector<int64_t> shape,
                    std::span<const std::byte> data) {
  const DTypeInfo& info = dtype_info(dtype);
  const int64_t n = checked_elements(name, shape);
  if (dtype == DType::q8_0) {
    throw Error("tensor " + name + ": q8_0 views need their scales (Tensor::q8_view)");
  }
  if (shape.back() % info.block_values != 0) {
    throw Error("tensor " + name + ": rows of " + std::to_string(shape.back()) +
                " values are not " + "whole " + info.name + " blocks of " +
                std::to_string(info.block_values));
  }
  const int64_t bytes = checked_mul(n / info.block_values, info.block_bytes, "tensor " + name);
  if (static_cast<int64_t>(data.size()) != bytes) {
    throw Error("tensor " + name + ": " + info.name + " [" + std::to_string(n) + " values] needs " +
                std::to_string(bytes) + " bytes, has " + std::to_string(data.size()));
  }
  Tensor t;
  t.name = std::move(name);
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.data = data;
  return t;
}

Tensor Tensor::f32_view(std::string name, std::vector<int64_t> shape, std::span<const float> data) {
  Tensor t = view(std::move(name), DType::f32, std::move(shape), std::as_bytes(data));
  (void)t.f32();  // alignment
  return t;
}

Tensor Tensor::q8_view(std::string name, std::vector<int64_t> shape, std::span<const int8_t> values,
                       std::span<const float> scales, int64_t group_size) {
  const int64_t n = checked_elements(name, shape);
  if (group_size <= 0 || shape.back() % group_size != 0) {
    throw Error("tensor " + name + ": q8_0 group size " + std::to_string(group_size) +
                " does not divide its rows of " + std::to_string(shape.back()) + " values");
  }
  if (static_cast<int64_t>(values.size()) != n ||
      static_cast<int64_t>(scales.size()) != n / group_size) {
    throw Error("tensor " + name + ": q8_0 [" + std::to_string(n) + " values] in groups of " +
                std::to_string(group_size) + " has " + std::to_string(values.size()) +
                " values and " + std::to_string(scales.size()) + " scales");
  }
  Tensor t;
  t.name = std::move(name);
  t.dtype = DType::q8_0;
  t.shape = std::move(shape);
  t.data = std::as_bytes(values);
  t.scales = std::as_bytes(scales);
  t.group_size = group_size;
  (void)t.q8_scales();  // alignment
  return t;
}

}  // namespace llama
