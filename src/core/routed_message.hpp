// The messages of a routed round of a distributed run (sim/distribution.hpp, Exchange::routed):
// bytes for every process, and bytes for some processes only.
#pragma once

#include <cstdint>
#include <vector>

namespace fleetsim {

/// One process's message in a routed round: bytes every process receives, and bytes for some
/// processes only (`to`, by process index; those of processes that are not the round's peers
/// are not sent).
struct RoutedMessage {
  std::vector<std::uint8_t> common;
  std::vector<std::vector<std::uint8_t>> to;
};

/// What a process receives in a routed round, by process index: each process's common bytes,
/// and the bytes it sent this process (empty from processes that are not its peers, and at
/// this process's own index).
struct RoutedReceived {
  std::vector<std::vector<std::uint8_t>> common, from;
};

}  // namespace fleetsim
