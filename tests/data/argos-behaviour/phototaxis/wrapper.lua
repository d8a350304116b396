-- Runs the original script unchanged (dofile, from this folder: both ARGoS and fleetsim resolve
-- it against the working directory) and, once a second, before the original's step, prints
--   POS <robot id> <tick> <x> <y>
-- (tick = steps run so far; x, y in metres from robot.positioning) for behaviour_stats.py.
dofile("../../argos/GiuliaNardicchia+intelligent-robotic-system/lab_activity-01/01a-phototaxis/phototaxis.lua")

local original_step = step
local steps_run = 0

function step()
  if steps_run % 10 == 0 then
    local p = robot.positioning.position
    print(string.format("POS %s %d %.4f %.4f", robot.id, steps_run, p.x, p.y))
  end
  steps_run = steps_run + 1
  original_step()
end
