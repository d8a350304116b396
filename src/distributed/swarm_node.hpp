// A swarm experiment as a node of a federation (docs/federation-format.md, "Swarm nodes";
// docs/federate-api.md): <node name="swarm" experiment="swarm.xml"> runs the experiment tick
// by tick on the node's flows. Each output sends every robot's pose at its timestamps; each
// input takes poses for the experiment's robots (external robots, MORSE's ExternalObject:
// a robot flown by another program), applied at the first tick that starts at or after the
// message's timestamp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fleetsim::distributed {

/// Makes federation nodes with an `experiment` run it (federation::swarm_factory()).
void install_swarm_nodes();

/// A pose message's entry (the payload of a swarm node's inputs and outputs).
struct RobotPose {
  std::string name;  ///< the robot's id in the experiment
  double x = 0, y = 0, z = 0, theta = 0;
};
/// Payload: u32 n, then n x (u32 length, the name's bytes, f64 x, y, z, theta), little-endian.
std::vector<std::uint8_t> encode_poses(const std::vector<RobotPose>& poses);
/// Throws std::runtime_error naming what does not fit.
std::vector<RobotPose> decode_poses(const std::vector<std::uint8_t>& payload);

}  // namespace fleetsim::distributed
