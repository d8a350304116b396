-- The DEECo playground's SingleActionWheels (its examples/predator): a speed and a rotation
-- kept between ticks; when the robot's action is taken, a move (speed > 0) drops the
-- rotation, so a robot turns once, then goes straight. require "single_action_wheels".
local wheels = {speed = 1.0, angle = 0.0}

function wheels.send()
  if wheels.speed ~= 0 then wheels.angle = 0 end
  robot.deeco_wheels.set_action(wheels.speed, wheels.angle)
end

return wheels
