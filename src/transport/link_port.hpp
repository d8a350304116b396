// What the transports between processes share, whatever carries the bytes (ZeroMQ sockets or
// shared-memory rings): a node receives over *links*, one per node that feeds it, each
// carrying that node's messages in its (timestamp, flow) order; it checks every message that
// arrives, keeps it in its input's bounded buffer or holds it back while that buffer is full
// (then stops reading the link: docs/time-management.md, "Progress"), and when a peer is lost
// names what it left waiting.
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "transport/port.hpp"
#include "transport/refusals.hpp"
#include "transport/wire.hpp"

namespace fleetsim::transport {

/// The nodes that feed `sink`, sorted by name: a node's link k comes from the k-th.
std::vector<std::string> feeding_nodes(const NodeLayout& sink);

class LinkPort : public Port {
 public:
  /// What has arrived on the input's link is read first (read_arrived), then the oldest
  /// buffered message is returned.
  std::optional<Message> poll(std::size_t input) override;

 protected:
  LinkPort(const FederationLayout& layout, const NodeLayout& self, PortOptions options);

  /// The receiving side of one link.
  struct Link {
    std::string peer;
    std::vector<std::size_t> inputs;  ///< the inputs it feeds
    std::optional<Message> held;      ///< arrived while its input's buffer was full
    std::size_t held_input = 0;
    RefusalCount refused;
  };
  struct Input {
    std::deque<Message> buffer;
    std::size_t capacity = 1;
    std::size_t link = 0;
    SimTime next = 0;  ///< timestamp of the next message expected to arrive
  };

  /// Takes what was decoded from a frame that arrived on link `k`: a message it buffers (or
  /// holds), or a refusal it logs. Throws std::runtime_error naming the peer when the frame is
  /// of another wire version (every later one would be refused too). True if taken.
  bool accept(std::size_t k, std::variant<Message, WireError>&& decoded);
  /// Reads what has arrived on link `k` into its inputs' buffers, without waiting (poll()).
  virtual void read_arrived(std::size_t k) = 0;
  /// Removes the oldest message of input `i` (which has one); the message held back on its
  /// link then enters its buffer if there is room.
  Message pop(std::size_t i);
  /// Messages are still due on link `k` (some of its inputs expect one before the end).
  bool owes(std::size_t k) const;
  /// Some of link `k`'s messages are still in their inputs' buffers.
  bool buffered(std::size_t k) const;
  /// Throws PeerLost: link `k`'s peer is gone (`how`) while messages are still due on it.
  [[noreturn]] void lost_source(std::size_t k, const std::string& how) const;
  /// Throws PeerLost if a node this one feeds is gone (`how`) while it still had messages to
  /// receive from this one: `next` gives, per flow, the timestamp of the next one.
  void check_sink(const std::string& peer, const std::map<FlowId, SimTime>& next,
                  const std::string& how) const;
  /// Logs (the first ten per link, then one in a thousand) and counts a refused frame.
  void refuse(std::size_t k, const std::string& reason);

  std::vector<Link> links_;
  std::vector<Input> in_;
  SimTime until_;

 private:
  std::string last_text(const std::string& peer) const;
  std::string flow_name(FlowId flow) const;
};

}  // namespace fleetsim::transport
