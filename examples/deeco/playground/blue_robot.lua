-- Team blue (T2) of the competition: the autonomous robot of competition_robot.lua.
TEAM = 2
require "competition_robot"
