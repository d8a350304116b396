-- The DEECo playground's OrtogonalRobot (its examples/basic): full speed ahead; on touching
-- one thing, turn so that the contact is behind (one tick), then go on.
function step()
  local c = robot.collision
  if c.action.type ~= "rotate" and #c == 1 then
    robot.deeco_wheels.set_action(0, c[1].angle + math.pi)
  else
    robot.deeco_wheels.set_action(1, 0)
  end
end
