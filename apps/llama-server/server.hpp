// llama-server as an object: listen (health says "loading"), load the model (every
// route serves), stop (refuse new requests, let those in flight end, close). main()
// and the tests drive it the same way.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "server_context.hpp"
#include "server_options.hpp"

namespace httplib {
class Server;
}

namespace llama::server {

class Server {
 public:
  // `log_line`: where the one line per request goes (thread-safe calls are made).
  Server(ServerOptions options, std::function<void(const std::string&)> log_line);
  ~Server();  // stop()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds --host:--port and starts serving in a thread of its own; returns the port
  // (the chosen one for --port 0). Throws llama::Error when the address cannot be bound.
  int listen();
  // Opens the model and starts the engine (llama::Error naming the stage on failure);
  // from then on /health says ok and every route serves.
  void load();
  // Refuses new requests (503), lets those in flight run for --drain-timeout, then
  // cancels the rest, waits for their responses and stops listening. Idempotent.
  void stop();

  // The engine, for counts; null before load().
  const Engine* engine() const;

 private:
  const ServerOptions options_;
  ServerContext ctx_;
  std::unique_ptr<LoadedModel> loaded_;
  std::unique_ptr<httplib::Server> http_;
  std::thread listener_;
  std::mutex stop_mutex_;
};

}  // namespace llama::server
