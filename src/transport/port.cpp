#include "transport/port.hpp"

#include <iostream>
#include <random>
#include <thread>

#include "fleetsim/random.hpp"

namespace fleetsim::transport {

const NodeLayout* FederationLayout::find(const std::string& name) const {
  for (const auto& n : nodes)
    if (n.name == name) return &n;
  return nullptr;
}

Port::Port(const NodeLayout& layout, PortOptions options)
    : layout_(layout), options_(std::move(options)) {
  jitter_state_ = options_.jitter_seed;
  if (jitter_state_ == 0 && options_.jitter_us > 0) {
    std::random_device rd;
    jitter_state_ = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  }
}

void Port::jitter() {
  if (options_.jitter_us == 0) return;
  jitter_state_ += 0x9e3779b97f4a7c15ULL;
  std::uint64_t us = mix64(jitter_state_) % (static_cast<std::uint64_t>(options_.jitter_us) + 1);
  if (us > 0) std::this_thread::sleep_for(std::chrono::microseconds(us));
}

void Port::log(const std::string& line) const {
  if (options_.log)
    options_.log(line);
  else
    std::cerr << line << std::endl;
}

void Port::report_wait(bool sending, std::size_t index, const std::string& peer,
                       std::chrono::steady_clock::time_point since) const {
  if (!options_.on_wait) return;
  WaitReport r;
  r.sending = sending;
  r.index = index;
  r.peer = peer;
  r.peer_last = last_from(peer);
  r.waited = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - since);
  options_.on_wait(r);
}

SimTime Port::last_from(const std::string& peer) const {
  auto it = last_from_.find(peer);
  return it == last_from_.end() ? -1 : it->second;
}

}  // namespace fleetsim::transport
