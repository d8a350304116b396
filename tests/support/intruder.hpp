// What a stranger on the network can send to a node's ZeroMQ port: raw bytes over TCP (garbage,
// an HTTP request), and the bytes of a genuine CURVE session that it captured on the path and
// replays. Tests of the refusals a node logs (docs/federation-format.md, Authentication).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <zmq.hpp>

namespace fleetsim::testing {

/// A TCP connection to 127.0.0.1:`port` (-1 when refused).
inline int tcp_connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/// Connects to 127.0.0.1:`port` (trying for up to 10 s while nothing listens there yet), sends
/// `bytes`, waits a little for the other side to read them, closes. False if it never connected.
inline bool send_raw(int port, const std::string& bytes) {
  int fd = -1;
  for (int t = 0; t < 1000 && fd < 0; ++t) {
    fd = tcp_connect(port);
    if (fd < 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (fd < 0) return false;
  (void)!write(fd, bytes.data(), bytes.size());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  close(fd);
  return true;
}

/// The bytes a CURVE client (`client_public`, `client_secret`) sends in a whole session with a
/// CURVE server holding `server_secret` (whose public key is `server_public`): its greeting,
/// its handshake and one message, `payload`, as an eavesdropper between them captures them.
/// The session runs here, through a recording relay; nothing else sees it. The client is a
/// PUSH socket (a federation's link), or with `dealer` a DEALER (a secondary joining).
inline std::string record_curve_session(const std::string& server_public,
                                        const std::string& server_secret,
                                        const std::string& client_public,
                                        const std::string& client_secret,
                                        const std::string& payload, bool dealer = false) {
  zmq::context_t ctx;  // no ZAP handler: the server admits any client key
  zmq::socket_t server(ctx, dealer ? zmq::socket_type::router : zmq::socket_type::pull);
  server.set(zmq::sockopt::linger, 0);
  server.set(zmq::sockopt::curve_server, 1);
  server.set(zmq::sockopt::curve_secretkey, server_secret);
  server.bind("tcp://127.0.0.1:*");
  const std::string at = server.get(zmq::sockopt::last_endpoint);
  const int server_port = std::stoi(at.substr(at.rfind(':') + 1));
  // The relay: a listening socket the client reaches, a connection to the server.
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a);
  listen(listener, 1);
  getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len);
  zmq::socket_t client(ctx, dealer ? zmq::socket_type::dealer : zmq::socket_type::push);
  client.set(zmq::sockopt::linger, 0);
  client.set(zmq::sockopt::curve_serverkey, server_public);
  client.set(zmq::sockopt::curve_publickey, client_public);
  client.set(zmq::sockopt::curve_secretkey, client_secret);
  client.connect("tcp://127.0.0.1:" + std::to_string(ntohs(a.sin_port)));
  (void)client.send(zmq::buffer(payload), zmq::send_flags::dontwait);
  const int from_client = accept(listener, nullptr, nullptr);
  const int to_server = tcp_connect(server_port);
  std::string recorded;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  bool delivered = false;
  while (!delivered && std::chrono::steady_clock::now() < end) {
    pollfd fds[2] = {{from_client, POLLIN, 0}, {to_server, POLLIN, 0}};
    poll(fds, 2, 10);
    char buf[4096];
    if (fds[0].revents & POLLIN) {
      const ssize_t n = read(from_client, buf, sizeof buf);
      if (n <= 0) break;
      recorded.append(buf, static_cast<std::size_t>(n));
      (void)!write(to_server, buf, static_cast<std::size_t>(n));
    }
    if (fds[1].revents & POLLIN) {
      const ssize_t n = read(to_server, buf, sizeof buf);
      if (n <= 0) break;
      (void)!write(from_client, buf, static_cast<std::size_t>(n));
    }
    zmq::message_t m;
    delivered = server.recv(m, zmq::recv_flags::dontwait).has_value();
  }
  close(from_client);
  close(to_server);
  close(listener);
  return delivered ? recorded : std::string();
}

/// Expects in `err` the three refusals a test's intruder caused, in order: garbage, an HTTP
/// request (neither speaks ZeroMQ) and a replayed CURVE session (it does not authenticate),
/// each logged as `refused` (the line up to its count) and "(N so far): ...".
inline void expect_intrusions_logged(const std::string& err, const std::string& refused) {
  EXPECT_NE(err.find(refused + "(1 so far): it did not speak ZeroMQ (garbage, or another "
                               "protocol such as HTTP)"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find(refused + "(2 so far): it did not speak ZeroMQ"), std::string::npos) << err;
  EXPECT_NE(err.find(refused + "(3 so far): it did not authenticate"), std::string::npos) << err;
}

}  // namespace fleetsim::testing
