// A scene for the tests of interventions on several processes: four e-pucks whose Lua
// controllers stand still until a global `speed` is set, in an 8 m arena whose two domains are
// cut between the robots' x at the start. Robot 2 (c) starts in the right-hand domain, facing
// the left-hand one, so that once its speed is set it drives into the other process's domain.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace fleetsim::testing {

/// Writes still.lua and cross.xml (`seconds` long) into `dir`; returns cross.xml's path.
inline std::string write_crossing_scene(const std::filesystem::path& dir, int seconds) {
  std::ofstream(dir / "still.lua")
      << "speed = 0\nfunction step()\n  robot.wheels.set_velocity(speed, speed)\nend\n";
  std::ofstream(dir / "cross.xml")
      << "<fleetsim><framework ticks_per_second=\"10\" length=\"" << seconds
      << "\" seed=\"3\"/>"
         "<controllers><controller id=\"s\" type=\"lua\" script=\"still.lua\"/></controllers>"
         "<arena size=\"8,8\">"
         "<robot id=\"a\" kind=\"epuck\" controller=\"s\" position=\"-0.3,2\" heading=\"0\"/>"
         "<robot id=\"b\" kind=\"epuck\" controller=\"s\" position=\"-0.3,-2\" heading=\"0\"/>"
         "<robot id=\"c\" kind=\"epuck\" controller=\"s\" position=\"0.3,-1\" heading=\"180\"/>"
         "<robot id=\"d\" kind=\"epuck\" controller=\"s\" position=\"2,1\" heading=\"180\"/>"
         "</arena></fleetsim>\n";
  return (dir / "cross.xml").string();
}

}  // namespace fleetsim::testing
