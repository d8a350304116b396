-- Runs the original script unchanged (dofile, from this folder: both ARGoS and fleetsim resolve
-- it against the working directory) and, once a second, before the original's step, prints
--   POS <robot id> <tick> <x> <y> <darkest motor ground reading>
-- (tick = steps run so far; x, y in metres from robot.positioning) for behaviour_stats.py.
dofile("../../argos/andrea-acampora+robotic-argos-programs/swarm-robotics/02-aggregation_black_spot/blank_spot.lua")

local original_step = step
local steps_run = 0

function step()
  if steps_run % 10 == 0 then
    local p = robot.positioning.position
    print(string.format("POS %s %d %.4f %.4f %.3f", robot.id, steps_run, p.x, p.y, math.min(robot.motor_ground[1].value, robot.motor_ground[2].value, robot.motor_ground[3].value, robot.motor_ground[4].value)))
  end
  steps_run = steps_run + 1
  original_step()
end
