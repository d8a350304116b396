-- The DEECo playground's PreyRobot (its examples/predator): calm (standing) until the
-- ensemble alerts it (knowledge `alert`, with the predator's place in `predator`); alerted, it
-- turns its back to the predator and runs, turning by a third of a circle when it touches
-- something.
local wheels = require "single_action_wheels"
local reaction = false

function step()
  local c = robot.collision
  local alert = robot.knowledge.alert ~= 0
  if alert and (not reaction or c.action.type == "move") then
    local p = robot.positioning.position
    local yaw = robot.positioning.orientation:toeulerangles()
    local predator = robot.knowledge.predator
    wheels.angle = math.atan(predator[2] - p.y, predator[1] - p.x) - yaw + math.pi
    wheels.speed = 0
    reaction = true
  elseif alert and #c > 0 then
    if c.action.type ~= "rotate" then
      wheels.speed, wheels.angle = 0, math.pi / 3
    else
      wheels.speed, wheels.angle = 1, 0
    end
  elseif not alert then
    reaction = false
    wheels.speed, wheels.angle = 0, 0
  else
    wheels.speed, wheels.angle = 1, 0
  end
  wheels.send()
end
