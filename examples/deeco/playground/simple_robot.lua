-- The DEECo playground's SimpleRobot (its examples/basic): full speed ahead; on touching
-- something, turn around in place (one tick), then go on. Its decision reads the collision
-- sensor's echo of the last action, as the Java robot reads CollisionData.action.
function step()
  local c = robot.collision
  if #c > 0 and c.action.type ~= "rotate" then
    robot.deeco_wheels.set_action(0, math.pi)
  else
    robot.deeco_wheels.set_action(1, 0)
  end
end
