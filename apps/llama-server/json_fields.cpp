// Typed, range-checked reads of JSON request fields (json_fields.hpp).
#include "json_fields.hpp"

#include <cmath>

#include "api_error.hpp"

namespace llama::server {

using nlohmann::json;

json parse_body(std::string_view body) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw ApiError(400, "the request body is not valid JSON");
  if (!j.is_object()) throw ApiError(400, "the request body must be a JSON object");
  return j;
}

const char* type_name(const json& v) {
  if (v.is_object()) return "an object";
  if (v.is_array()) return "an array";
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  return "null";
}

bool get_bool(const json& v, const std::string& field) {
  if (!v.is_boolean())
    throw invalid_field(field, std::string("must be a boolean, got ") + type_name(v));
  return v.get<bool>();
}

// An integer in [lo, hi]; JSON numbers with a fraction or beyond int64 are refused.
int64_t get_int(const json& v, const std::string& field, int64_t lo, int64_t hi) {
  // nlohmann keeps non-negative integers as unsigned: beyond int64 they are only
  // compared, never converted.
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi))
    throw invalid_field(field, "must be at most " + std::to_string(hi));
  if (!v.is_number_integer())
    throw invalid_field(field, std::string("must be an integer, got ") + type_name(v));
  const int64_t x = v.get<int64_t>();
  if (x < lo || x > hi) {
    throw invalid_field(field, "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                                   "], got " + std::to_string(x));
  }
  return x;
}

float get_number(const json& v, const std::string& field, double lo, double hi) {
  if (!v.is_number())
    throw invalid_field(field, std::string("must be a number, got ") + type_name(v));
  const double x = v.get<double>();
  if (!std::isfinite(x) || x < lo || x > hi) {
    throw invalid_field(field, "must be in [" + json(lo).dump() + ", " + json(hi).dump() +
                                   "], got " + json(x).dump());
  }
  return static_cast<float>(x);
}

const std::string& get_string(const json& v, const std::string& field) {
  if (!v.is_string())
    throw invalid_field(field, std::string("must be a string, got ") + type_name(v));
  return v.get_ref<const std::string&>();
}

std::vector<int32_t> in_vocabulary(const std::vector<int64_t>& ids, int64_t vocab,
                                   const std::string& field) {
  std::vector<int32_t> out;
  out.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= vocab) {
      throw invalid_field(field + "[" + std::to_string(i) + "]",
                          "token id " + std::to_string(ids[i]) + " is outside the vocabulary of " +
                              std::to_string(vocab));
    }
    out.push_back(static_cast<int32_t>(ids[i]));
  }
  return out;
}

}  // namespace llama::server
