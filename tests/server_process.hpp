// The built llama-server binary as a child process for the load and fault tests:
// started with `--port 0` (the port read from its first line of output), its
// standard error collected line by line, its resident memory read from /proc, and
// killed at the end of the scope whatever happened.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace llama::test {

class ServerProcess {
 public:
  // Starts the server with `args` (after the binary's path) and waits until its
  // stderr says it is ready (REQUIREs it, naming what it printed otherwise).
  explicit ServerProcess(const std::vector<std::string>& args);
  ~ServerProcess();  // SIGTERM, then SIGKILL after a bounded wait; always reaped
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  int port() const { return port_; }
  pid_t pid() const { return pid_; }

  // The lines written to stderr so far (no newline, "llama-server: " kept).
  std::vector<std::string> log() const;
  // How many stderr lines so far satisfy `match`.
  size_t count_lines(const std::function<bool(const std::string&)>& match) const;
  // Waits up to `timeout` until some line satisfies `match`; false if none did.
  bool wait_line(const std::function<bool(const std::string&)>& match,
                 std::chrono::milliseconds timeout) const;
  // VmRSS from /proc/PID/status, in KiB.
  long rss_kib() const;
  // SIGTERM, then SIGKILL if it has not exited 15 s later; its exit code (-1 when
  // killed by a signal). The destructor does it when no test did.
  int stop();

 private:
  void read_stderr(int fd);

  pid_t pid_ = -1;
  int exit_code_ = -1;
  int port_ = 0;
  int stdout_fd_ = -1;
  std::thread stderr_reader_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::vector<std::string> lines_;
};

}  // namespace llama::test
