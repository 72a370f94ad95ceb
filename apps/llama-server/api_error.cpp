// OpenAI's error shapes (api_error.hpp).
#include "api_error.hpp"

namespace llama::server {

ApiError::ApiError(int status, std::string message, std::string param)
    : std::runtime_error(std::move(message)), status_(status), param_(std::move(param)) {}

const char* ApiError::type() const {
  switch (status_) {
    case 401:
      return "authentication_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
    case 503:
      return "server_busy";
    default:
      return status_ >= 500 ? "server_error" : "invalid_request_error";
  }
}

nlohmann::json ApiError::to_json() const {
  nlohmann::json error{{"message", what()},
                       {"type", type()},
                       {"param", param_.empty() ? nlohmann::json() : nlohmann::json(param_)},
                       {"code", status_}};
  return {{"error", std::move(error)}};
}

ApiError invalid_field(const std::string& field, const std::string& why) {
  return ApiError(400, field + ": " + why, field);
}

}  // namespace llama::server
