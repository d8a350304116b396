-- Shared by the cases' wrapper.lua: runs the original script ORIGINAL_SCRIPT unchanged (dofile,
-- resolved against the working directory, the case folder, by ARGoS and fleetsim alike) and,
-- once a second, before the original's step, prints
--   POS <robot id> <tick> <x> <y>[<POSITION_EXTRA()>]
-- (tick = steps run so far; x, y in metres from robot.positioning) for behaviour.py.
dofile(ORIGINAL_SCRIPT)

local original_step = step
local steps_run = 0

function step()
  if steps_run % 10 == 0 then
    local p = robot.positioning.position
    local extra = POSITION_EXTRA and POSITION_EXTRA() or ""
    print(string.format("POS %s %d %.4f %.4f", robot.id, steps_run, p.x, p.y) .. extra)
  end
  steps_run = steps_run + 1
  original_step()
end
