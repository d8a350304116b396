-- The DEECo playground's competition CollectibleItem: it starts hidden at the field's corner;
-- after 20 to 59 cycles it shows up somewhere in [10, 90] x [10, 90] with a half side of 1;
-- once found (knowledge found = 1, set by CollectEnsemble) it hides again and shows up
-- 20 to 59 cycles later elsewhere. Knowledge: found, and t1, t2 (finds by each team).
local waiting = false
local respawn = nil

function step()
  if not respawn then  -- the first cycle: hidden at the corner
    respawn = object.random.uniform_int(20, 60)
    object.x, object.y, object.size = 0, 100, 0
  end
  if object.knowledge.found == 1 then
    object.size = 0
    if not waiting then
      respawn = object.random.uniform_int(20, 60)
      waiting = true
    end
  end
  respawn = respawn - 1
  if object.size == 0 and respawn <= 0 then
    waiting = false
    object.knowledge.found = 0
    object.x = object.random.uniform() * 80 + 10
    object.y = 100 - (object.random.uniform() * 80 + 10)
    object.size = 2
  end
end

function reset() waiting, respawn = false, nil end
