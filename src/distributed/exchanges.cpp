#include "distributed/exchanges.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "log/byte_io.hpp"
#include "time/flow_node.hpp"
#include "time/lockstep.hpp"

namespace fleetsim::distributed {

std::string process_name(int p) {
  return "process-" + std::to_string(p);
}

std::unique_ptr<transport::Port> open_process_port(const transport::FederationLayout& layout, int p,
                                                   transport::Carrier carrier,
                                                   transport::PortOptions options,
                                                   transport::ZmqOptions zmq) {
  transport::PortConfig c;
  c.carrier = carrier;
  c.port = std::move(options);
  c.shm.ring_bytes = std::size_t{1} << 20;
  c.zmq = std::move(zmq);
  return transport::open_port(layout, process_name(p), std::move(c));
}

SimTime round_time(std::uint64_t g, SimTime tick_ns, int rounds_per_tick) {
  if (g == 0) return 0;  // the start: every process is there, with the same world
  const auto per = static_cast<std::uint64_t>(rounds_per_tick);
  const auto tick = static_cast<SimTime>((g - 1) / per);
  const auto k = static_cast<SimTime>((g - 1) % per + 1);  // 1 .. rounds_per_tick
  const SimTime at =
      k == rounds_per_tick ? tick_ns : std::max<SimTime>(k, tick_ns * k / rounds_per_tick);
  return tick * tick_ns + at;
}

transport::FederationLayout make_swarm_layout(SyncMode mode, int processes, SimTime tick_ns) {
  std::vector<std::string> names;
  for (int p = 0; p < processes; ++p) names.push_back(process_name(p));
  if (mode == SyncMode::kLockstep) {
    auto layout = time::make_lockstep_layout(names, std::numeric_limits<SimTime>::max());
    return layout;
  }
  transport::FederationLayout layout;
  layout.until = std::numeric_limits<SimTime>::max();
  for (int p = 0; p < processes; ++p) {
    transport::NodeLayout node;
    node.name = names[p];
    transport::OutputLink out{
        static_cast<transport::FlowId>(p), "swarm." + names[p], {}, round_time(0, tick_ns)};
    for (int q = 0; q < processes; ++q) {
      if (q == p) continue;
      out.sinks.push_back(names[q]);
      node.inputs.push_back({static_cast<transport::FlowId>(q), "swarm." + names[q], names[q], 4,
                             round_time(0, tick_ns)});
    }
    node.outputs.push_back(std::move(out));
    layout.nodes.push_back(std::move(node));
  }
  return layout;
}

namespace {

/// DSAAM: every process emits its round-g message on its flow, then consumes every other
/// process's round-g message. The FlowNode enforces the four rules; delays change nothing. A
/// routed round's emission sends each process the common bytes and only the part made for it.
class FlowExchange final : public PortExchange {
 public:
  FlowExchange(transport::Port& port, int process, int processes, SimTime tick_ns,
               int rounds_per_tick)
      : PortExchange(&port),
        node_(port.layout(), port, options()),
        process_(process),
        processes_(processes),
        tick_ns_(tick_ns),
        per_tick_(rounds_per_tick) {
    // The flow's sinks, by process (make_swarm_layout: every other process).
    for (const std::string& sink : port.layout().outputs.at(0).sinks)
      for (int q = 0; q < processes_; ++q)
        if (sink == process_name(q)) sinks_.push_back(q);
    if (sinks_.size() != static_cast<std::size_t>(processes_ - 1))
      throw std::logic_error("a swarm process's flow must feed every other process");
  }

  std::vector<std::vector<std::uint8_t>> round(std::vector<std::uint8_t> mine, bool more) override {
    return exchange_round(more, [&](time::Emission& e) {
      e.payload = std::move(mine);
      node_.emit(0, e);
      return std::move(e.payload);
    });
  }

 protected:
  RoutedReceived routed_round(RoutedMessage mine, int process, std::span<const int> peers,
                              bool more) override {
    std::vector<std::vector<std::uint8_t>> per_sink;
    per_sink.reserve(sinks_.size());
    for (int q : sinks_) {
      const bool peer = std::binary_search(peers.begin(), peers.end(), q);
      per_sink.push_back(
          encode_routed(mine, peer ? std::span<const int>(&q, 1) : std::span<const int>()));
    }
    auto all = exchange_round(more, [&](time::Emission& e) {
      node_.emit_each(0, e, std::move(per_sink));
      return encode_routed(mine, {});
    });
    return decode_routed(all, process, peers);
  }

 private:
  /// One round (or one part of it): `send` emits this process's message on the flow and
  /// returns what this process keeps of it; then every other process's message is consumed.
  template <class Send>
  std::vector<std::vector<std::uint8_t>> exchange_round(bool more, Send&& send) {
    std::vector<std::vector<std::uint8_t>> all(static_cast<std::size_t>(processes_));
    // The parts of a round one nanosecond apart, from the round's time on.
    const SimTime t = round_time(round_, tick_ns_, per_tick_) + part_;
    const SimTime next = more ? t + 1 : round_time(round_ + 1, tick_ns_, per_tick_);
    if (next <= t)
      throw std::runtime_error(
          "a round of the exchange has more parts than its ticks have "
          "nanoseconds (a world too large for its tick length)");
    time::Emission e;
    e.timestamp = t;
    e.period = next - t;
    const auto step = node_.next();
    if (step.kind != time::FlowNode::Step::Kind::kEmit || step.timestamp != t)
      throw std::logic_error("swarm exchange out of step with its flow node");
    all[static_cast<std::size_t>(process_)] = send(e);
    for (int k = 1; k < processes_; ++k) {
      const auto s = node_.next();
      if (s.kind != time::FlowNode::Step::Kind::kConsume || s.timestamp != t)
        throw std::logic_error("swarm exchange out of step with its flow node");
      transport::Message m = node_.consume();
      const auto from = static_cast<std::size_t>(m.flow);
      if (from >= all.size() || from == static_cast<std::size_t>(process_))
        throw std::runtime_error("a message on an unknown flow");
      all[from] = std::move(m.payload);
    }
    if (more) {
      ++part_;
    } else {
      ++round_;
      part_ = 0;
    }
    return all;
  }

  static time::FlowNodeOptions options() {
    time::FlowNodeOptions o;
    o.until = std::numeric_limits<SimTime>::max();
    return o;
  }
  time::FlowNode node_;
  int process_, processes_;
  SimTime tick_ns_;
  int per_tick_;
  std::uint64_t round_ = 0;
  SimTime part_ = 0;
  std::vector<int> sinks_;  ///< the processes the flow feeds, in its sinks' order
};

/// Lockstep: the secondaries acknowledge step g with their bytes; the primary collects them
/// and publishes step g+1 carrying everyone's bytes.
class LockstepExchange final : public PortExchange {
 public:
  LockstepExchange(transport::Port& port, int process, int processes, SimTime tick_ns)
      : PortExchange(&port), port_(port), process_(process), processes_(processes) {
    if (process_ == 0) {
      primary_ = std::make_unique<time::LockstepPrimary>(port_, tick_ns);
      primary_->publish({});
    } else {
      secondary_ = std::make_unique<time::LockstepSecondary>(port_);
      secondary_->next_step();
    }
  }

  std::vector<std::vector<std::uint8_t>> round(std::vector<std::uint8_t> mine, bool) override {
    if (primary_) {
      const auto& acks = primary_->collect();
      std::vector<std::vector<std::uint8_t>> all;
      all.push_back(std::move(mine));
      for (const auto& a : acks) all.push_back(a);
      const auto merged = encode(all);
      primary_->publish(std::vector<std::vector<std::uint8_t>>(acks.size(), merged));
      return all;
    }
    secondary_->ack(std::move(mine));
    return decode(secondary_->next_step().payload);
  }

 private:
  // The primary's step order: u32 n, then n x (u32 length, bytes), every process's by index.
  static std::vector<std::uint8_t> encode(const std::vector<std::vector<std::uint8_t>>& all) {
    std::vector<std::uint8_t> out;
    log::ByteWriter w(out);
    w.u32(static_cast<std::uint32_t>(all.size()));
    for (const auto& a : all) {
      w.u32(static_cast<std::uint32_t>(a.size()));
      w.raw(a.data(), a.size());
    }
    return out;
  }
  std::vector<std::vector<std::uint8_t>> decode(const std::vector<std::uint8_t>& in) const {
    try {
      log::ByteReader r(in.data(), in.size(), "a lockstep step order");
      const std::uint32_t n = r.u32();
      if (n != static_cast<std::uint32_t>(processes_))
        throw std::runtime_error("a lockstep step order for " + std::to_string(n) +
                                 " processes (expected " + std::to_string(processes_) + ")");
      std::vector<std::vector<std::uint8_t>> all(n);
      for (auto& a : all) {
        const std::uint32_t len = r.u32();
        const std::uint8_t* bytes = r.take(len);
        a.assign(bytes, bytes + len);
      }
      if (r.remaining() != 0) throw std::runtime_error("a lockstep step order with trailing bytes");
      return all;
    } catch (const log::LogError& e) {
      throw std::runtime_error(e.what());
    }
  }

  transport::Port& port_;
  int process_, processes_;
  std::unique_ptr<time::LockstepPrimary> primary_;
  std::unique_ptr<time::LockstepSecondary> secondary_;
};

}  // namespace

namespace {

/// Runs a round, noting in `failed` that it failed because another process left or failed.
template <class Round>
auto noting_lost_peers(bool& failed, Round&& round) -> decltype(round()) {
  try {
    return round();
  } catch (const transport::PeerLost&) {
    failed = true;
    throw;
  } catch (const transport::FederationStopped&) {
    failed = true;
    throw;
  }
}

}  // namespace

std::vector<std::vector<std::uint8_t>> PortExchange::all_gather(std::vector<std::uint8_t> mine,
                                                                bool more) {
  return noting_lost_peers(peer_failed_, [&] { return round(std::move(mine), more); });
}

RoutedReceived PortExchange::routed(RoutedMessage mine, int process, std::span<const int> peers,
                                    bool more) {
  return noting_lost_peers(peer_failed_,
                           [&] { return routed_round(std::move(mine), process, peers, more); });
}

std::unique_ptr<PortExchange> make_exchange(SyncMode mode, transport::Port& port, int process,
                                            int processes, SimTime tick_ns, int rounds_per_tick) {
  if (mode == SyncMode::kLockstep)
    return std::make_unique<LockstepExchange>(port, process, processes, tick_ns);
  return std::make_unique<FlowExchange>(port, process, processes, tick_ns, rounds_per_tick);
}

}  // namespace fleetsim::distributed
