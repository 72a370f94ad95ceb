// A raw TCP connection to a server on 127.0.0.1, for tests that send bytes no HTTP
// client would (malformed or partial requests, a client that stalls or trickles).
// Closed at the end of its scope.
#pragma once

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>

namespace llama::test {

struct RawSocket {
  explicit RawSocket(int port) {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
  }
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;
  ~RawSocket() { close(); }

  // False when the server has closed its end (no SIGPIPE).
  bool try_send(const std::string& data) const {
    return ::send(fd, data.data(), data.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(data.size());
  }
  void send(const std::string& data) const { REQUIRE(try_send(data)); }

  // All the server sends until it closes the connection.
  std::string receive_all() const {
    std::string reply;
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;)
      reply.append(buf, static_cast<size_t>(n));
    return reply;
  }

  // Each later read waits at most `seconds` (read_some's bound).
  void set_read_timeout(int seconds) const {
    timeval tv{seconds, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  // One read, appended to `into`; false once the server has closed its end.
  bool read_some(std::string& into) const {
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n > 0) into.append(buf, static_cast<size_t>(n));
    return n != 0 && !(n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
  }

  void close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  int fd = -1;
};

}  // namespace llama::test
