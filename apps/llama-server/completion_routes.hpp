// POST /v1/completions and /v1/chat/completions: a checked request becomes the
// model's tokens (the chat template renders messages), goes to the engine, and its
// result comes back whole or as Server-Sent Events.
#pragma once

#include <httplib.h>

#include "server_context.hpp"

namespace llama::server {

void add_completion_routes(httplib::Server& http, ServerContext& ctx);

}  // namespace llama::server
