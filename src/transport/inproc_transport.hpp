// In-process transport: nodes are threads of one process; every input is a bounded queue in
// shared memory that the sender fills directly (a full queue blocks the sender).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "transport/port.hpp"

namespace fleetsim::transport {

/// The shared queues of an in-process federation. Create once, then one port per node thread.
/// Thread-safe; outlives its ports.
class InprocNetwork {
 public:
  explicit InprocNetwork(const FederationLayout& layout);

  /// The port of node `name` (must exist in the layout). Call once per node.
  std::unique_ptr<Port> port(const std::string& name, PortOptions options);
  /// Stops the federation: every blocked or later call on any port throws FederationStopped
  /// with `reason`. The first reason wins. Any thread.
  void stop(const std::string& reason);
  bool stopped() const { return stopped_.load(); }

 private:
  friend class InprocPort;
  /// One input buffer. Written by the source node's thread, read by the sink's thread.
  struct Queue {
    std::mutex mutex;
    std::condition_variable changed;
    std::deque<Message> items;
    std::size_t capacity = 1;
  };
  Queue& queue(const std::string& node, FlowId flow);
  [[noreturn]] void throw_stopped() const;

  FederationLayout layout_;
  std::map<std::pair<std::string, FlowId>, std::unique_ptr<Queue>> queues_;
  std::atomic<bool> stopped_{false};
  mutable std::mutex reason_mutex_;
  std::string reason_;
};

}  // namespace fleetsim::transport
