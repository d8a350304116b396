-- Diffusion with range-and-bearing and the camera on, as an ARGoS Lua foot-bot script that
-- ARGoS's `argos3` and `fleetsim run` both run unchanged (footbot_lua_10k.argos).
-- Each tick: go straight unless the proximity readings show an obstacle in the frontal cone
-- (then turn on the spot away from it); broadcast the robot's number and the tick on
-- range-and-bearing; count the messages heard and the blobs the camera sees (so that both
-- programs deliver them to the script). All 13 LEDs are lit so that cameras see each other.
-- Robot fb0 writes `bench-tick <tick> <os.clock()>` to stderr every 10 ticks: run_argos.py
-- times ARGoS's loop between two of these lines (ARGoS prints no timings of its own).

local speed = 10                                -- wheel speed, cm/s
local cos_alpha2 = math.cos(math.rad(7.5)) ^ 2  -- frontal cone, half-angle 7.5 degrees
local delta2 = 0.1 ^ 2                          -- minimum length of the summed readings
local ray_x, ray_y
local number = 0
local tick = 0
heard = 0  -- messages heard and blobs seen over the run (globals, for a reader)
seen = 0

function init()
  number = tonumber(string.match(robot.id, "%d+")) or 0
  robot.leds.set_all_colors("red")
  robot.colored_blob_omnidirectional_camera.enable()
end

function step()
  tick = tick + 1
  if number == 0 and tick % 10 == 0 and robot.id == "fb0" then
    io.stderr:write(string.format("bench-tick %d %.3f\n", tick, os.clock()))
  end
  robot.range_and_bearing.set_data(1, number % 256)
  robot.range_and_bearing.set_data(2, tick % 256)
  local rab = robot.range_and_bearing
  for i = 1, #rab do
    if rab[i].range < 100 then heard = heard + 1 end
  end
  seen = seen + #robot.colored_blob_omnidirectional_camera

  local proximity = robot.proximity
  local n = #proximity
  if ray_x == nil then
    ray_x, ray_y = {}, {}
    for i = 1, n do
      ray_x[i] = math.cos(proximity[i].angle)
      ray_y[i] = math.sin(proximity[i].angle)
    end
  end
  local x, y = 0, 0
  for i = 1, n do
    local value = proximity[i].value
    x = x + value * ray_x[i]
    y = y + value * ray_y[i]
  end
  local length2 = x * x + y * y
  local in_cone = x > 0 and x * x >= cos_alpha2 * length2
  if length2 < delta2 or not in_cone then
    robot.wheels.set_velocity(speed, speed)
  elseif y > 0 then
    robot.wheels.set_velocity(speed, -speed)  -- obstacle on the left: turn right
  else
    robot.wheels.set_velocity(-speed, speed)
  end
end

function reset()
  tick = 0
end

function destroy()
end
