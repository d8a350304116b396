-- Team red (T1) of the competition: the autonomous robot of competition_robot.lua.
TEAM = 1
require "competition_robot"
