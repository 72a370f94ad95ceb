// Answers in the server's one JSON style: success bodies, OpenAI-shaped errors, and
// the wrapper every route runs in so that any exception becomes the right status.
#pragma once

#include <functional>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "api_error.hpp"
#include "server_context.hpp"

namespace llama::server {

void send_json(httplib::Response& res, int status, const nlohmann::json& body);
void send_error(httplib::Response& res, const ApiError& error);

// The loaded model, or ApiError 503 while loading.
const LoadedModel& ready_model(const ServerContext& ctx);

// Runs `route`; ApiError becomes its status, llama::Error a 400 (a template or
// tokenizer refusing the request's content), out of memory a 503, anything else 500.
httplib::Server::Handler guarded(
    std::function<void(const httplib::Request&, httplib::Response&)> route);

}  // namespace llama::server
