-- Runs "../../argos/andrea-acampora+robotic-argos-programs/swarm-robotics/02-aggregation_black_spot/blank_spot.lua" (the original, unchanged) and prints positions: ../print_positions.lua.
ORIGINAL_SCRIPT = "../../argos/andrea-acampora+robotic-argos-programs/swarm-robotics/02-aggregation_black_spot/blank_spot.lua"
-- The darkest of the four motor ground readings, after the position.
function POSITION_EXTRA()
  local g = robot.motor_ground
  return string.format(" %.3f", math.min(g[1].value, g[2].value, g[3].value, g[4].value))
end
dofile("../print_positions.lua")
