// Starting and stopping llama-server (server.hpp).
#include "server.hpp"

#include <httplib.h>

#include <netinet/in.h>
#include <sys/socket.h>

#include <csignal>

#include "connection_queue.hpp"
#include "llama/error.hpp"
#include "routes.hpp"

namespace llama::server {
namespace {

// The port a socket is bound to, or -1.
int bound_port(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return -1;
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(addr).sin_port);
  if (addr.ss_family == AF_INET6)
    return ntohs(reinterpret_cast<const sockaddr_in6&>(addr).sin6_port);
  return -1;
}

}  // namespace

Server::Server(ServerOptions options, std::function<void(const std::string&)> log_line)
    : options_(std::move(options)), ctx_(options_, std::move(log_line)) {}

Server::~Server() { stop(); }

int Server::listen() {
  // A client that disconnects makes the next write fail with EPIPE; the signal
  // would end the process instead (cpp-httplib sends without MSG_NOSIGNAL).
  std::signal(SIGPIPE, SIG_IGN);
  http_ = std::make_unique<httplib::Server>();
  // cpp-httplib serves each connection on a pool thread for as long as it lasts (a
  // stream holds one); connections past --max-connections are answered 503 at once.
  // cpp-httplib takes ownership of the queue it is given (its API wants a raw pointer).
  const auto threads = static_cast<size_t>(options_.http_threads);
  const auto max_open = static_cast<size_t>(options_.max_connections);
  http_->new_task_queue = [threads, max_open] { return new ConnectionQueue(threads, max_open); };
  http_->set_payload_max_length(static_cast<size_t>(options_.max_body));
  http_->set_read_timeout(static_cast<time_t>(options_.timeout));
  http_->set_write_timeout(static_cast<time_t>(options_.timeout));
  add_routes(*http_, ctx_);
  // cpp-httplib's own options would set SO_REUSEPORT, which lets a second server bind
  // the same port and take half its connections: SO_REUSEADDR only, for a restart
  // while old connections linger. The socket is kept to widen its backlog below.
  int listen_fd = -1;
  http_->set_socket_options([&listen_fd](socket_t fd) {
    const int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    listen_fd = fd;
  });
  int port = options_.port;
  if (port == 0) {
    port = http_->bind_to_any_port(options_.host);
  } else if (!http_->bind_to_port(options_.host, port)) {
    port = -1;
  }
  if (port < 0) {
    throw Error("--host/--port: cannot listen on " + options_.host + ":" +
                std::to_string(options_.port));
  }
  // cpp-httplib listens with a backlog of 5: a burst of clients (64 connecting at
  // once) overflows it and the kernel drops connections before the server sees them.
  // listen() again on the bound socket only raises the backlog.
  if (listen_fd < 0 || bound_port(listen_fd) != port || ::listen(listen_fd, SOMAXCONN) != 0) {
    throw Error("--host/--port: cannot set the listen backlog on " + options_.host + ":" +
                std::to_string(port));
  }
  listener_ = std::thread([this] { http_->listen_after_bind(); });
  return port;
}

void Server::load() {
  loaded_ = std::make_unique<LoadedModel>(options_);
  ctx_.loaded.store(loaded_.get(), std::memory_order_release);
}

void Server::stop() {
  std::lock_guard lock(stop_mutex_);
  if (loaded_) {
    loaded_->engine->shutdown(std::chrono::seconds(options_.drain_timeout));
    // Every request has ended; give their streams a moment to write their last chunks.
    ctx_.streams.wait_idle(std::chrono::steady_clock::now() + std::chrono::seconds(5));
  }
  if (http_) http_->stop();
  if (listener_.joinable()) listener_.join();
}

const Engine* Server::engine() const { return loaded_ ? loaded_->engine.get() : nullptr; }

}  // namespace llama::server
