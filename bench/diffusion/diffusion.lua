-- Diffusion (the ARGoS report's algorithm 2) as an ARGoS Lua foot-bot/e-puck script: go
-- straight unless an obstacle is in the frontal cone, then turn on the spot away from it.
-- The same rule as the built-in C++ `diffusion` controller (src/control/diffusion.hpp),
-- including its one addition: a robot whose last move was blocked and that sees something
-- turns away too. `bench/diffusion --controller lua` runs it to measure what Lua costs.

local speed = 10                             -- wheel speed, cm/s (ARGoS units)
local cos_alpha2 = math.cos(math.rad(7.5)) ^ 2  -- frontal cone, half-angle 7.5 degrees
local delta2 = 0.1 ^ 2                       -- minimum length of the summed readings

-- Unit vector of each ray: the angles do not change, so they are computed once.
local ray_x, ray_y

function init()
end

function step()
  local proximity = robot.proximity
  local n = #proximity
  if ray_x == nil then
    ray_x, ray_y = {}, {}
    for i = 1, n do
      ray_x[i] = math.cos(proximity[i].angle)
      ray_y[i] = math.sin(proximity[i].angle)
    end
  end
  -- The readings summed as vectors: where the obstacles are.
  local x, y = 0, 0
  for i = 1, n do
    local value = proximity[i].value
    x = x + value * ray_x[i]
    y = y + value * ray_y[i]
  end
  local length2 = x * x + y * y
  local in_cone = x > 0 and x * x >= cos_alpha2 * length2
  local collision = robot.collision
  local blocked = collision ~= nil and collision.realization < 1 and length2 > 0
  if length2 < delta2 or (not in_cone and not blocked) then
    robot.wheels.set_velocity(speed, speed)
  elseif y > 0 then
    robot.wheels.set_velocity(speed, -speed)   -- obstacle on the left: turn right
  else
    robot.wheels.set_velocity(-speed, speed)
  end
end

function reset()
end

function destroy()
end
