// Reading a request's JSON fields with their types and ranges checked: every failure
// is an ApiError 400 naming the field, so each route's parser stays a list of fields.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace llama::server {

// The body as a JSON object; 400 when it is not valid JSON or not an object.
nlohmann::json parse_body(std::string_view body);

const char* type_name(const nlohmann::json& v);
bool get_bool(const nlohmann::json& v, const std::string& field);
// An integer in [lo, hi]; fractions and values beyond int64 are refused.
int64_t get_int(const nlohmann::json& v, const std::string& field, int64_t lo, int64_t hi);
// A finite number in [lo, hi].
float get_number(const nlohmann::json& v, const std::string& field, double lo, double hi);
const std::string& get_string(const nlohmann::json& v, const std::string& field);

// Token ids a request gave (non-negative, as parsed) checked against the model's
// vocabulary; 400 naming `field`[i] and both numbers otherwise.
std::vector<int32_t> in_vocabulary(const std::vector<int64_t>& ids, int64_t vocab,
                                   const std::string& field);

}  // namespace llama::server
