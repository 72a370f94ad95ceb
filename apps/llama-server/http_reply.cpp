// JSON responses and the routes' exception boundary (http_reply.hpp).
#include "http_reply.hpp"

#include <new>

#include "error_report.hpp"
#include "llama/error.hpp"
#include "openai_json.hpp"

namespace llama::server {

void send_json(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(to_text(body), "application/json");
}

void send_error(httplib::Response& res, const ApiError& error) {
  send_json(res, error.status(), error.to_json());
}

const LoadedModel& ready_model(const ServerContext& ctx) {
  const LoadedModel* m = ctx.loaded.load(std::memory_order_acquire);
  if (m == nullptr) throw ApiError(503, "the model is loading");
  return *m;
}

httplib::Server::Handler guarded(
    std::function<void(const httplib::Request&, httplib::Response&)> route) {
  return [route = std::move(route)](const httplib::Request& req, httplib::Response& res) {
    try {
      route(req, res);
    } catch (const ApiError& e) {
      send_error(res, e);
    } catch (const Error& e) {
      send_error(res, ApiError(400, cli::one_line(e.what())));
    } catch (const std::bad_alloc&) {
      send_error(res, ApiError(503, "out of memory while serving the request"));
    } catch (const std::exception& e) {
      send_error(res, ApiError(500, cli::one_line(e.what())));
    }
  };
}

}  // namespace llama::server
