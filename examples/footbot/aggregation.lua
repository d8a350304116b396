-- Aggregation by range-and-bearing, an ARGoS Lua foot-bot script.
--
-- Every robot broadcasts two bytes: 1 ("I am here") and the size of its group (how many robots
-- it hears within `close_cm`). A robot that hears others steers toward them, each pulling with
-- its group's size squared over its range, so bigger groups pull harder; one that hears nobody
-- wanders (straight, with random turns). Beside a neighbour it stops; a robot in a group of
-- two or fewer that hears a bigger group leaves, now and then, to join it, so groups merge.
-- The proximity rays keep it off walls and other robots.
-- The LEDs show the state: red = alone (wandering), yellow = moving toward others, green =
-- in a group (stopped beside a neighbour).

local speed = 15            -- cm/s
local close_cm = 35         -- a neighbour this close (centre to centre) counts as "together"
local turn_ticks = 0        -- remaining ticks of a random turn
local turn_sign = 1
local leaving = 0           -- remaining ticks of leaving a small group

function init()
  robot.range_and_bearing.set_data(1, 1)
  robot.leds.set_all_colors("red")
  state = "alone"
end

-- Wheel speeds that turn the robot toward `angle` (radians from its heading) while moving.
local function steer(angle)
  if angle > math.pi / 6 then
    return -speed / 3, speed / 3
  elseif angle < -math.pi / 6 then
    return speed / 3, -speed / 3
  end
  local k = angle / (math.pi / 6)   -- -1 .. 1
  return speed * (1 - k * 0.5), speed * (1 + k * 0.5)
end

-- The direction (radians) of the summed proximity readings, and their strength.
local function obstacle()
  local x, y = 0, 0
  for i = 1, #robot.proximity do
    local p = robot.proximity[i]
    x = x + p.value * math.cos(p.angle)
    y = y + p.value * math.sin(p.angle)
  end
  return math.atan(y, x), math.sqrt(x * x + y * y)
end

function step()
  -- Neighbours: the pull toward them, the nearest, my group and the biggest group heard.
  local ax, ay, nearest, group, biggest = 0, 0, math.huge, 0, 0
  local fx, fy = 0, 0   -- the pull of the robots beyond my group only
  for i = 1, #robot.range_and_bearing do
    local m = robot.range_and_bearing[i]
    if m.data[1] == 1 then
      local weight = (1 + m.data[2]) ^ 2 / m.range
      ax = ax + weight * math.cos(m.horizontal_bearing)
      ay = ay + weight * math.sin(m.horizontal_bearing)
      if m.range < nearest then nearest = m.range end
      if m.range < close_cm then
        group = group + 1
      else
        fx = fx + weight * math.cos(m.horizontal_bearing)
        fy = fy + weight * math.sin(m.horizontal_bearing)
      end
      if m.data[2] > biggest then biggest = m.data[2] end
    end
  end
  robot.range_and_bearing.set_data(2, math.min(group, 255))

  if leaving > 0 then
    leaving = leaving - 1
  elseif nearest < close_cm and group <= 1 and biggest > group + 1 and
         robot.random.bernoulli(0.02) then
    leaving = 40
  end

  local left, right
  if nearest < close_cm and leaving == 0 then
    state = "together"
    left, right = 0, 0
  elseif leaving > 0 then
    state = "approaching"
    left, right = steer(math.atan(fy, fx))
  elseif nearest < math.huge then
    state = "approaching"
    left, right = steer(math.atan(ay, ax))
  else
    state = "alone"
    if turn_ticks > 0 then
      turn_ticks = turn_ticks - 1
      left, right = -turn_sign * speed / 2, turn_sign * speed / 2
    else
      if robot.random.bernoulli(0.05) then
        turn_ticks = robot.random.uniform_int(3, 12)
        turn_sign = robot.random.bernoulli() and 1 or -1
      end
      left, right = speed, speed
    end
  end

  -- Obstacle ahead (a wall, or a robot of another group): turn away from it.
  local angle, strength = obstacle()
  if state ~= "together" and strength > 0.2 and math.abs(angle) < math.pi / 2 then
    if angle > 0 then left, right = speed / 2, -speed / 2 else left, right = -speed / 2, speed / 2 end
  end
  robot.wheels.set_velocity(left, right)

  if state == "together" then
    robot.leds.set_all_colors("green")
  elseif state == "approaching" then
    robot.leds.set_all_colors("yellow")
  else
    robot.leds.set_all_colors("red")
  end
end

function reset()
  init()
end

function destroy()
end
