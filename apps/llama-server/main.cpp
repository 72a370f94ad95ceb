// llama-server entry point: flags, listen, load, serve until SIGINT or SIGTERM.
#include <pthread.h>

#include <csignal>
#include <iostream>
#include <mutex>

#include "backend_flags.hpp"
#include "error_report.hpp"
#include "server.hpp"
#include "usage_error.hpp"

namespace {

constexpr const char* kProgram = "llama-server";

int serve(const llama::server::ServerOptions& o) {
  // The signals are taken by sigwait() below: blocked here, before any thread
  // starts, so every thread inherits the mask and none is interrupted by them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  llama::cli::load_plugins(o.plugins);
  std::mutex log_mutex;
  llama::server::Server server(o, [&](const std::string& line) {
    std::lock_guard lock(log_mutex);
    std::cerr << kProgram << ": " << line << "\n";
  });
  const int port = server.listen();
  std::cout << kProgram << ": listening on http://" << o.host << ":" << port << std::endl;
  server.load();
  std::cerr << kProgram << ": ready\n";
  int signal = 0;
  sigwait(&signals, &signal);
  std::cerr << kProgram << ": " << (signal == SIGINT ? "SIGINT" : "SIGTERM")
            << ": finishing the requests in flight\n";
  server.stop();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  llama::server::ServerOptions options;
  try {
    options = llama::server::parse_server_options({argv + 1, argv + argc});
  } catch (const llama::cli::UsageError& e) {
    return llama::cli::report_usage_error(kProgram, std::cerr, e.what());
  }
  return llama::cli::run_reporting_errors(kProgram, std::cerr, [&] {
    switch (options.action) {
      case llama::server::Action::help:
        std::cout << options.help_text;
        return 0;
      case llama::server::Action::version:
        std::cout << llama::cli::version_line(kProgram) << "\n";
        return 0;
      case llama::server::Action::list_backends:
        llama::cli::load_plugins(options.plugins);
        llama::cli::list_backends(std::cout);
        return 0;
      default:
        return serve(options);
    }
  });
}
