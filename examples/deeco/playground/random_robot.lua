-- The DEECo playground's RandomRobot (its examples/basic): a random speed each tick, and now
-- and then (or on touching something) a random turn of up to half a circle.
function step()
  local c = robot.collision
  if #c > 0 and c.action.type ~= "rotate" then
    robot.deeco_wheels.set_action(0, math.pi * robot.random.uniform())
  elseif robot.random.uniform() < 0.998 then
    robot.deeco_wheels.set_action(robot.random.uniform(), 0)
  else
    robot.deeco_wheels.set_action(0, math.pi * robot.random.uniform())
  end
end
