#include "transport/port.hpp"

#include <charconv>
#include <iostream>
#include <random>
#include <thread>

#include <fmt/format.h>

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

std::optional<Message> Port::poll(std::size_t input) {
  throw std::logic_error(fmt::format(
      "node '{}': input {} cannot be polled on this transport (receive-order flows link "
      "processes: shared memory or ZeroMQ)",
      layout_.name, input));
}

void Port::send_each(std::size_t output, std::span<const Message> per_sink) {
  (void)per_sink;
  throw std::logic_error(
      fmt::format("node '{}': output {} cannot send each sink its own message on this transport",
                  layout_.name, output));
}

std::uint64_t new_run_id() {
  std::random_device rd;
  std::uint64_t id = 0;
  while (id == 0) id = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  return id;
}

std::string run_id_text(std::uint64_t id) {
  return fmt::format("{:016x}", id);
}

std::optional<std::uint64_t> parse_run_id(const std::string& text) {
  std::uint64_t id = 0;
  const char* end = text.data() + text.size();
  auto [at, ec] = std::from_chars(text.data(), end, id, 16);
  if (text.empty() || text.size() > 16 || ec != std::errc() || at != end || text[0] == '-')
    return std::nullopt;
  return id;
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
