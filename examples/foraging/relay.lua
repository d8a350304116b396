-- An eye-bot that climbs to 1.5 m, wanders over the arena and relays: it broadcasts byte 1 =
-- 2 ("an eye-bot") and byte 2 = how many pushing foot-bots it hears (its receiver reaches
-- 10 m, a foot-bot's 3 m).

local altitude = 1.5        -- metres
local vx, vy = 0, 0

function init()
  robot.leds.set_all_colors("blue")
end

function step()
  local pushers = 0
  for i = 1, #robot.range_and_bearing do
    local m = robot.range_and_bearing[i]
    if m.data[1] == 1 and m.data[2] == 1 then pushers = pushers + 1 end
  end
  robot.range_and_bearing.set_data(1, 2)
  robot.range_and_bearing.set_data(2, math.min(pushers, 255))
  local p = robot.positioning.position
  if p.z < altitude - 0.05 then
    robot.quadrotor.set_linear_velocity(0, 0, 0.5)
    return
  end
  if robot.random.uniform() < 0.02 or (vx == 0 and vy == 0) then
    local a = robot.random.uniform(-math.pi, math.pi)
    vx, vy = 0.3 * math.cos(a), 0.3 * math.sin(a)
  end
  if math.abs(p.x) > 3 then vx = -0.3 * p.x / math.abs(p.x) end
  if math.abs(p.y) > 3 then vy = -0.3 * p.y / math.abs(p.y) end
  robot.quadrotor.set_linear_velocity(vx, vy, altitude - p.z)
end

function reset() end
function destroy() end
