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

}  // namespace fleetsim::transport
