-- The DEECo playground's PredatorRobot (its examples/predator): it picks a random target on
-- the 100 x 100 field, turns to it, drives there, and picks another when it arrives (within
-- sqrt(3)) or touches something. Positions come from the positioning sensor (the scenario's
-- CoordinatesProcessor), in metres with y up: angles are taken in that frame.
local wheels = require "single_action_wheels"
local target = {x = 0, y = 0}

function step()
  local p = robot.positioning.position
  local yaw = robot.positioning.orientation:toeulerangles()
  local c = robot.collision
  local dx, dy = p.x - target.x, p.y - target.y
  local requested = dx * dx + dy * dy < 3.0 or #c > 0
  if requested and c.action.type ~= "rotate" and wheels.angle == 0 then
    target = {x = robot.random.uniform(0, 100), y = robot.random.uniform(0, 100)}
    wheels.angle = math.atan(target.y - p.y, target.x - p.x) - yaw
    wheels.speed = 0
  elseif c.action.type == "rotate" then
    wheels.speed, wheels.angle = 1, 0
  end
  wheels.send()
end
