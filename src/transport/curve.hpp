// CURVE authentication of ZeroMQ links (docs/federation-format.md, "Authentication"): every
// node holds a key pair; the federation lists the public keys; a link's bound end (the sink)
// accepts only the node that feeds it, proving it holds that node's secret key, and the
// connecting end checks that it reached the sink it meant. Messages are encrypted.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <zmq.hpp>

#include "transport/refusals.hpp"

namespace fleetsim::transport {

/// A CURVE key pair as Z85 text (40 characters each).
struct CurveKeys {
  std::string public_key;
  std::string secret_key;
};

/// A fresh key pair (libsodium through ZeroMQ). Throws std::runtime_error if this ZeroMQ
/// was built without CURVE.
CurveKeys make_curve_keys();

/// Why `text` is not a Z85 CURVE key (empty when it is one).
std::string check_curve_key(const std::string& text);

/// The public half of a Z85 secret key. Throws std::runtime_error.
std::string curve_public_of(const std::string& secret_key);

/// The key in a key file (its first line, without surrounding blanks); throws
/// std::runtime_error naming the file when it cannot be read or holds no key.
std::string read_curve_key_file(const std::string& path);

/// Writes a key pair as DIR_PUBLIC/NAME.pub (the public key, to share) and DIR_SECRET/NAME.key
/// (the secret key, readable by its owner only: mode 0600). Refuses to overwrite a key file.
/// Throws std::runtime_error. Returns the two paths.
std::pair<std::string, std::string> write_curve_key_files(const std::string& name,
                                                          const std::string& public_dir,
                                                          const std::string& secret_dir);

/// The 32 bytes of a Z85 key. Throws std::runtime_error.
std::string binary_key(const std::string& z85);

/// The ZeroMQ authentication (ZAP) handler of a context: a CURVE server socket whose
/// ZMQ_ZAP_DOMAIN is D accepts a client only if its public key is one of allowed[D]; the
/// message property "User-Id" of what it then receives is that key's name. Runs on its own
/// thread; refusals are queued for the owner's thread to log.
class ZapHandler {
 public:
  /// domain -> (binary public key -> name)
  using Allowed = std::map<std::string, std::map<std::string, std::string>>;
  ZapHandler(zmq::context_t& ctx, Allowed allowed);
  ~ZapHandler();
  ZapHandler(const ZapHandler&) = delete;
  ZapHandler& operator=(const ZapHandler&) = delete;
  /// Refusals since the last call, as log lines ("refused a connection from ADDR on ...").
  std::vector<std::string> take_refusals();

 private:
  void run();
  zmq::socket_t socket_;
  Allowed allowed_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::vector<std::string> refusals_;
  std::map<std::string, RefusalCount> refused_;  ///< by domain
  std::thread thread_;
};

}  // namespace fleetsim::transport
