-- A foot-bot that forages boxes into the nest (x < -3, to the west), an ARGoS Lua script.
--
-- It goes out east to a random depth, then comes back west. Coming back, whatever close ahead
-- the camera does not show as a robot (no lit LED ahead) is a box: it pushes it home, steering
-- toward the west and toward the side the box is on, so that the box stays ahead (LED green).
-- In the nest it backs off and goes out again. Robots ahead, and walls on the way out, it
-- turns away from. It broadcasts byte 1 = 1 ("a foot-bot") and byte 2 = 1 while pushing; one
-- that hears of pushers only through an eye-bot (byte 1 = 2) shows yellow, otherwise red.

local speed = 12            -- cm/s
local nest_x = -3           -- metres
local mode, depth, backing = "out", 0, 0

local function heading()
  local a, axis = robot.positioning.orientation:toangleaxis()
  if axis.z < 0 then a = -a end
  return a
end

local function wrap(a)
  while a > math.pi do a = a - 2 * math.pi end
  while a < -math.pi do a = a + 2 * math.pi end
  return a
end

local function clamp(v) return math.max(-0.6, math.min(0.6, v)) end

function init()
  robot.colored_blob_omnidirectional_camera.enable()
  robot.leds.set_all_colors("red")
  depth = robot.random.uniform(-1, 3.5)
end

function step()
  -- What is close ahead (left and right of the heading), and whether it is a robot.
  local front, lf, rf = 0, 0, 0
  for i = 1, #robot.proximity do
    local p = robot.proximity[i]
    if math.abs(p.angle) < 0.7 then
      front = math.max(front, p.value)
      if p.angle > 0 then lf = lf + p.value else rf = rf + p.value end
    end
  end
  local robot_ahead = false
  for i = 1, #robot.colored_blob_omnidirectional_camera do
    local b = robot.colored_blob_omnidirectional_camera[i]
    if math.abs(b.angle) < 0.8 and b.distance < 45 then robot_ahead = true end
  end
  local direct, relayed = false, false
  for i = 1, #robot.range_and_bearing do
    local m = robot.range_and_bearing[i]
    if m.data[1] == 1 and m.data[2] == 1 then direct = true end
    if m.data[1] == 2 and m.data[2] > 0 then relayed = true end
  end

  local h = heading()
  local x = robot.positioning.position.x
  local pushing = false
  local k                                    -- turn: -0.6 (right) .. 0.6 (left)
  if backing > 0 then
    backing = backing - 1
    robot.wheels.set_velocity(-speed, -speed / 3)
  else
    if mode == "out" then
      k = clamp(0.8 * wrap(0 - h))
      if front > 0.2 then k = lf > rf and -0.6 or 0.6 end
      if x > depth then mode = "back" end
    else
      k = clamp(0.8 * wrap(math.pi - h))
      if front > 0.2 and robot_ahead then
        k = lf > rf and -0.6 or 0.6
      elseif front > 0.05 and not robot_ahead then
        pushing = true
        k = clamp(0.5 * wrap(math.pi - h) + 2 * (lf - rf))
      end
      if x < nest_x then
        mode, backing, depth = "out", 15, robot.random.uniform(-1, 3.5)
      end
    end
    if math.abs(k) >= 0.6 and not pushing then
      robot.wheels.set_velocity(-k * speed, k * speed)     -- turn on the spot
    else
      robot.wheels.set_velocity(speed * (1 - k), speed * (1 + k))
    end
  end
  robot.range_and_bearing.set_data(1, 1)
  robot.range_and_bearing.set_data(2, pushing and 1 or 0)
  if pushing then robot.leds.set_all_colors("green")
  elseif relayed and not direct then robot.leds.set_all_colors("yellow")
  else robot.leds.set_all_colors("red") end
end

function reset() end
function destroy() end
