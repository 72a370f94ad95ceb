// Every route of llama-server, the API key check before them, and the OpenAI-shaped
// bodies of cpp-httplib's own errors (404 unknown route, 413 body too large).
#pragma once

#include <httplib.h>

#include "server_context.hpp"

namespace llama::server {

void add_routes(httplib::Server& http, ServerContext& ctx);

}  // namespace llama::server
