// An error the server answers with: an HTTP status and OpenAI's error object
// {"error": {"message", "type", "param", "code"}}, thrown by request parsing and
// the routes and turned into the response in one place (routes.cpp).
#pragma once

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace llama::server {

class ApiError : public std::runtime_error {
 public:
  // `param`: the request field at fault ("" for none).
  ApiError(int status, std::string message, std::string param = {});

  int status() const { return status_; }
  const std::string& param() const { return param_; }
  // OpenAI's type for the status: invalid_request_error, authentication_error, ...
  const char* type() const;
  nlohmann::json to_json() const;

 private:
  int status_;
  std::string param_;
};

// A 400 invalid_request_error naming `field`: "field: why".
ApiError invalid_field(const std::string& field, const std::string& why);

}  // namespace llama::server
