#include "transport/curve.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

namespace fleetsim::transport {

CurveKeys make_curve_keys() {
  if (!zmq_has("curve"))
    throw std::runtime_error("this ZeroMQ library was built without CURVE (libsodium)");
  char pub[41] = {}, sec[41] = {};
  if (zmq_curve_keypair(pub, sec) != 0)
    throw std::runtime_error(std::string("cannot make a key pair: ") + zmq_strerror(zmq_errno()));
  return {pub, sec};
}

std::string check_curve_key(const std::string& text) {
  if (text.size() != 40)
    return "a key is 40 characters of Z85 text (`fleetsim keygen` makes them); this one has " +
           std::to_string(text.size());
  std::uint8_t bytes[32];
  if (!zmq_z85_decode(bytes, text.c_str())) return "it is not Z85 text";
  return "";
}

std::string curve_public_of(const std::string& secret_key) {
  if (auto why = check_curve_key(secret_key); !why.empty())
    throw std::runtime_error("not a secret key: " + why);
  char pub[41] = {};
  if (zmq_curve_public(pub, secret_key.c_str()) != 0)
    throw std::runtime_error(std::string("cannot derive a public key: ") +
                             zmq_strerror(zmq_errno()));
  return pub;
}

std::string read_curve_key_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read key file " + path + ": " + std::strerror(errno));
  std::string line;
  std::getline(in, line);
  const auto b = line.find_first_not_of(" \t\r");
  const auto e = line.find_last_not_of(" \t\r");
  line = b == std::string::npos ? "" : line.substr(b, e - b + 1);
  if (auto why = check_curve_key(line); !why.empty())
    throw std::runtime_error("key file " + path + " holds no key: " + why);
  return line;
}

std::pair<std::string, std::string> write_curve_key_files(const std::string& name,
                                                          const std::string& public_dir,
                                                          const std::string& secret_dir) {
  namespace fs = std::filesystem;
  const CurveKeys keys = make_curve_keys();
  std::error_code ec;
  fs::create_directories(public_dir, ec);
  fs::create_directories(secret_dir, ec);
  const std::string pub = (fs::path(public_dir) / (name + ".pub")).string();
  const std::string sec = (fs::path(secret_dir) / (name + ".key")).string();
  for (const auto& p : {pub, sec})
    if (fs::exists(p, ec))
      throw std::runtime_error(p + " exists; remove it first to make a new key for " + name);
  auto write = [](const std::string& path, const std::string& text, mode_t mode) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
    const std::string line = text + "\n";
    const bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
    ::close(fd);
    if (!ok) throw std::runtime_error("cannot write " + path);
  };
  write(sec, keys.secret_key, 0600);
  write(pub, keys.public_key, 0644);
  return {pub, sec};
}

std::string binary_key(const std::string& z85) {
  if (!check_curve_key(z85).empty()) throw std::runtime_error("not a Z85 key");
  std::string bin(32, '\0');
  zmq_z85_decode(reinterpret_cast<std::uint8_t*>(bin.data()), z85.c_str());
  return bin;
}

ZapHandler::ZapHandler(zmq::context_t& ctx, Allowed allowed)
    : socket_(ctx, zmq::socket_type::rep), allowed_(std::move(allowed)) {
  socket_.set(zmq::sockopt::linger, 0);
  socket_.bind("inproc://zeromq.zap.01");
  thread_ = std::thread([this] { run(); });
}

ZapHandler::~ZapHandler() {
  stop_ = true;
  thread_.join();
}

std::vector<std::string> ZapHandler::take_refusals() {
  std::lock_guard lock(mutex_);
  return std::exchange(refusals_, {});
}

void ZapHandler::run() {
  while (!stop_) {
    zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, std::chrono::milliseconds(50)) <= 0) continue;
    std::vector<zmq::message_t> request;
    do {
      request.emplace_back();
      if (!socket_.recv(request.back(), zmq::recv_flags::none)) return;
    } while (request.back().more());
    // version, request id, domain, address, identity, mechanism, credentials...
    auto frame = [&](std::size_t k) {
      return k < request.size() ? request[k].to_string() : std::string();
    };
    const std::string domain = frame(2), address = frame(3), mechanism = frame(5);
    std::string user;
    auto it = allowed_.find(domain);
    if (mechanism == "CURVE" && it != allowed_.end() && request.size() > 6 &&
        request[6].size() == 32) {
      auto key = it->second.find(request[6].to_string());
      if (key != it->second.end()) user = key->second;
    }
    if (user.empty()) {
      std::lock_guard lock(mutex_);
      RefusalCount& refused = refused_[domain];
      if (refused.count())
        refusals_.push_back(fmt::format(
            "refused a connection from {} to {} ({} so far): {}", address, domain, refused.total(),
            mechanism != "CURVE" ? "it did not authenticate (no CURVE key)"
                                 : "its key is not one listed for " + domain));
    }
    const std::string version = "1.0", code = user.empty() ? "400" : "200";
    const std::string text = user.empty() ? "key not listed" : "OK";
    socket_.send(zmq::buffer(version), zmq::send_flags::sndmore);
    socket_.send(request.size() > 1 ? std::move(request[1]) : zmq::message_t(),
                 zmq::send_flags::sndmore);
    socket_.send(zmq::buffer(code), zmq::send_flags::sndmore);
    socket_.send(zmq::buffer(text), zmq::send_flags::sndmore);
    socket_.send(zmq::buffer(user), zmq::send_flags::sndmore);
    socket_.send(zmq::message_t(), zmq::send_flags::none);
  }
}

}  // namespace fleetsim::transport
