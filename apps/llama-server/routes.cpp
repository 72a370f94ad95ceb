// Route registration, authentication and the small routes (routes.hpp).
#include "routes.hpp"

#include "auth.hpp"
#include "chat_page.hpp"
#include "completion_routes.hpp"
#include "connection_queue.hpp"
#include "error_report.hpp"
#include "http_reply.hpp"
#include "json_fields.hpp"
#include "metrics.hpp"
#include "tokenize_request.hpp"

namespace llama::server {
namespace {

using nlohmann::json;
using Request = httplib::Request;
using Response = httplib::Response;

// Loading, ready or draining: a balancer stops sending to a replica that answers 503.
void health(const ServerContext& ctx, Response& res) {
  const LoadedModel* m = ctx.loaded.load(std::memory_order_acquire);
  if (m == nullptr) {
    send_json(res, 503, {{"status", "loading"}});
  } else if (m->engine->stats().draining) {
    send_json(res, 503, {{"status", "draining"}});
  } else {
    send_json(res, 200, {{"status", "ok"}});
  }
}

void models(const ServerContext& ctx, Response& res) {
  const LoadedModel& m = ready_model(ctx);
  send_json(res, 200,
            {{"object", "list"},
             {"data", json::array({{{"id", m.name},
                                    {"object", "model"},
                                    {"created", 0},
                                    {"owned_by", "llama-backends"}}})}});
}

void metrics(const ServerContext& ctx, Response& res) {
  const LoadedModel& m = ready_model(ctx);
  res.status = 200;
  res.set_content(prometheus_text(m.engine->stats(), m.engine->sequences(), m.engine->context()),
                  "text/plain; version=0.0.4");
}

// Each sequence: busy or idle, its context, the positions its cache holds.
void slots(const ServerContext& ctx, Response& res) {
  const LoadedModel& m = ready_model(ctx);
  const std::vector<SequenceState> sequences = m.engine->sequences();
  json out = json::array();
  for (size_t i = 0; i < sequences.size(); ++i) {
    out.push_back({{"id", i},
                   {"is_processing", sequences[i].request != 0},
                   {"n_ctx", m.engine->context()},
                   {"tokens_cached", sequences[i].cached}});
  }
  send_json(res, 200, out);
}

void tokenize(const ServerContext& ctx, const Request& req, Response& res) {
  const LoadedModel& m = ready_model(ctx);
  const TokenizeRequest r = parse_tokenize_request(req.body);
  const std::vector<int32_t> tokens = m.tokenizer->encode(
      r.content, {.add_special = r.add_special, .parse_special = r.parse_special});
  json out = json::array();
  for (const int32_t t : tokens) {
    if (r.with_pieces) {
      out.push_back({{"id", t}, {"piece", std::string(m.tokenizer->piece(t))}});
    } else {
      out.push_back(t);
    }
  }
  send_json(res, 200, {{"tokens", std::move(out)}});
}

void detokenize(const ServerContext& ctx, const Request& req, Response& res) {
  const LoadedModel& m = ready_model(ctx);
  const DetokenizeRequest r = parse_detokenize_request(req.body);
  const std::vector<int32_t> ids = in_vocabulary(r.tokens, m.model.config.vocab_size, "tokens");
  send_json(res, 200, {{"content", m.tokenizer->decode(ids)}});
}

// Before routing, so before any body is read: first a connection past
// --max-connections gets 503 (ConnectionQueue); then a chunked body is refused, as
// cpp-httplib 0.11.4 bounds a body by --max-body only when it comes with a
// Content-Length (every OpenAI client sends a length); then the API key, the chat
// page, /health and
// /v1/models being public.
httplib::Server::HandlerResponse check_request(const ServerContext& ctx, const Request& req,
                                               Response& res) {
  if (ConnectionQueue::refusing()) {
    res.set_header("Connection", "close");
    send_error(res,
               ApiError(503, "the server is busy: " + std::to_string(ctx.options.max_connections) +
                                 " connections are open, the most it takes "
                                 "(--max-connections)"));
    return httplib::Server::HandlerResponse::Handled;
  }
  if (req.has_header("Transfer-Encoding")) {
    // Asks the client to close: cpp-httplib 0.11.4 keeps reading the connection, where
    // the unread chunks then fail to parse as a request (400) and end it.
    res.set_header("Connection", "close");
    send_error(res, ApiError(411, "a request body must come with a Content-Length, not chunked"));
    return httplib::Server::HandlerResponse::Handled;
  }
  const std::vector<std::string>& keys = ctx.options.api_keys;
  if (keys.empty() || is_public_path(req.path) ||
      authorized(req.get_header_value("Authorization"), keys)) {
    return httplib::Server::HandlerResponse::Unhandled;
  }
  res.set_header("WWW-Authenticate", "Bearer");
  send_error(res, ApiError(401, "invalid or missing API key (Authorization: Bearer KEY)"));
  return httplib::Server::HandlerResponse::Handled;
}

// cpp-httplib's own errors come without a body: give them OpenAI's shape.
void fill_error(const ServerContext& ctx, const Request& req, Response& res) {
  if (!res.body.empty()) return;
  if (res.status == 404) {
    send_error(res, ApiError(404, "no route " + cli::one_line(req.method + " " + req.path)));
  } else if (res.status == 413) {
    send_error(res, ApiError(413, "the request body is larger than --max-body (" +
                                      std::to_string(ctx.options.max_body) + " bytes)"));
  } else {
    send_error(res, ApiError(res.status, "the request could not be served"));
  }
}

}  // namespace

void add_routes(httplib::Server& http, ServerContext& ctx) {
  http.set_pre_routing_handler(
      [&ctx](const Request& req, Response& res) { return check_request(ctx, req, res); });
  http.set_error_handler([&ctx](const Request& req, Response& res) { fill_error(ctx, req, res); });
  http.set_logger([&ctx](const Request& req, const Response& res) {
    ctx.log(req.remote_addr + " " + cli::one_line(req.method + " " + req.path) + " " +
            std::to_string(res.status));
  });
  http.Get("/", [](const Request&, Response& res) { serve_chat_page(res); });
  http.Get("/health", guarded([&ctx](const Request&, Response& res) { health(ctx, res); }));
  http.Get("/v1/models", guarded([&ctx](const Request&, Response& res) { models(ctx, res); }));
  http.Get("/slots", guarded([&ctx](const Request&, Response& res) { slots(ctx, res); }));
  http.Get("/metrics", guarded([&ctx](const Request&, Response& res) { metrics(ctx, res); }));
  http.Post("/tokenize",
            guarded([&ctx](const Request& req, Response& res) { tokenize(ctx, req, res); }));
  http.Post("/detokenize",
            guarded([&ctx](const Request& req, Response& res) { detokenize(ctx, req, res); }));
  add_completion_routes(http, ctx);
}

}  // namespace llama::server
