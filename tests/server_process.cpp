// llama-server as a child process (server_process.hpp).
#include "server_process.hpp"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>

extern char** environ;

namespace llama::test {
namespace {

constexpr auto kStartTimeout = std::chrono::seconds(120);

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

// Reads one line from `fd` within `timeout`; empty when none came.
std::string read_line(int fd, std::chrono::steady_clock::duration timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string line;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;
    char c = 0;
    if (::read(fd, &c, 1) != 1) return "";
    if (c == '\n') return line;
    line.push_back(c);
  }
  return "";
}

}  // namespace

ServerProcess::ServerProcess(const std::vector<std::string>& args) {
  int out[2];
  int err[2];
  REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
  REQUIRE(::pipe2(err, O_CLOEXEC) == 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  std::vector<std::string> all = {LLAMA_SERVER_PATH};
  all.insert(all.end(), args.begin(), args.end());
  // posix_spawn's argv is char* const[] (a C API): pointers into `all`, which outlives it.
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int spawned = ::posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  ::close(err[1]);
  stdout_fd_ = out[0];
  if (spawned != 0) {
    ::close(err[0]);
    pid_ = -1;
    FAIL("cannot start " LLAMA_SERVER_PATH ": " << std::strerror(spawned));
  }
  stderr_reader_ = std::thread([this, fd = err[0]] { read_stderr(fd); });
  try {
    const std::string first = read_line(stdout_fd_, kStartTimeout);
    INFO("stderr:\n" << joined(log()));
    const size_t colon = first.rfind(':');
    REQUIRE(first.rfind("llama-server: listening on http://", 0) == 0);
    port_ = std::stoi(first.substr(colon + 1));
    REQUIRE(port_ > 0);
    REQUIRE(
        wait_line([](const std::string& l) { return l == "llama-server: ready"; }, kStartTimeout));
  } catch (...) {
    stop();
    throw;
  }
}

ServerProcess::~ServerProcess() { stop(); }

int ServerProcess::stop() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    int status = 0;
    bool reaped = false;
    for (int i = 0; i < 150 && !reaped; ++i) {  // up to 15 s to finish its requests
      reaped = ::waitpid(pid_, &status, WNOHANG) == pid_;
      if (!reaped) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!reaped) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
    }
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    pid_ = -1;
  }
  if (stderr_reader_.joinable()) stderr_reader_.join();  // EOF once the child is gone
  if (stdout_fd_ >= 0) ::close(stdout_fd_);
  stdout_fd_ = -1;
  return exit_code_;
}

void ServerProcess::read_stderr(int fd) {
  std::string partial;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) {
    partial.append(buf, static_cast<size_t>(n));
    std::vector<std::string> complete;
    for (size_t end; (end = partial.find('\n')) != std::string::npos;) {
      complete.push_back(partial.substr(0, end));
      partial.erase(0, end + 1);
    }
    if (complete.empty()) continue;
    {
      std::lock_guard lock(mutex_);
      lines_.insert(lines_.end(), complete.begin(), complete.end());
    }
    changed_.notify_all();
  }
  ::close(fd);
}

std::vector<std::string> ServerProcess::log() const {
  std::lock_guard lock(mutex_);
  return lines_;
}

size_t ServerProcess::count_lines(const std::function<bool(const std::string&)>& match) const {
  std::lock_guard lock(mutex_);
  size_t n = 0;
  for (const std::string& l : lines_) n += match(l) ? 1 : 0;
  return n;
}

bool ServerProcess::wait_line(const std::function<bool(const std::string&)>& match,
                              std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, timeout, [&] {
    for (const std::string& l : lines_) {
      if (match(l)) return true;
    }
    return false;
  });
}

long ServerProcess::rss_kib() const {
  std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  FAIL("no VmRSS in /proc/" << pid_ << "/status");
  return 0;
}

}  // namespace llama::test
