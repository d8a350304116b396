-- Team red (T1) of the competition: the playground's ControlledRobot. It carries out the
-- command station's order (knowledge `order`: type, x, y; 1 stay, 2 follow the item at x, y,
-- 3 recharge; from OrderEnsemble) and tells the station where it is and its energy (knowledge
-- `status`: x, y, energy, 1). On a contact ahead (within 90 degrees of its heading) while not
-- staying (and not near its station while recharging) it backs off 6 units from the contact
-- and goes 13 units at 45 degrees away from it, as long as the order stays the same. Its tag
-- is its energy, BROKEN at 0. Distances are compared squared, as the playground's
-- Geometry.distance gives them.
local STAY, FOLLOW, RECHARGE = 1, 2, 3
local avoiding = nil  -- {trajectory, the order it was for}

local function contact_ahead()
  local found = nil
  for i = 1, #robot.collision do
    local a = robot.collision[i].angle
    if a < math.pi / 2 and a > -math.pi / 2 then found = a end
  end
  return found
end

function step()
  robot.knowledge.team = 1
  robot.knowledge.tmid = tonumber(robot.id:sub(2))
  local energy = robot.layer("energy", "number")
  local p = robot.positioning.position
  local yaw = robot.positioning.orientation:toeulerangles()
  robot.knowledge.status = {p.x, p.y, energy, 1}
  robot.set_tag(energy > 0 and string.format("%d", energy) or "BROKEN")
  if energy <= 0 then
    robot.deeco_wheels.set_action(0, 0)
    return
  end
  local order = robot.knowledge.order
  local type = order[1]
  if type == 0 then return end  -- no order yet: the last action goes on
  local station = robot.knowledge.station
  local function drive_to(x, y) robot.deeco_wheels.set_action(1, math.atan(y - p.y, x - p.x) - yaw) end
  local same = avoiding and avoiding.order[1] == type and avoiding.order[2] == order[2]
               and avoiding.order[3] == order[3]
  local a = contact_ahead()
  if type ~= STAY and a and (type ~= RECHARGE or (station[1] - p.x)^2 + (station[2] - p.y)^2 > 40) then
    local back = yaw + math.pi + a
    local x1, y1 = p.x + 6 * math.cos(back), p.y + 6 * math.sin(back)
    local away = yaw + (a < 0 and math.pi / 4 or -math.pi / 4)
    avoiding = {trajectory = {{x1, y1}, {x1 + 13 * math.cos(away), y1 + 13 * math.sin(away)}},
                order = {order[1], order[2], order[3]}}
    same = true
  end
  if avoiding and same then
    local t = avoiding.trajectory[1]
    if not t then
      avoiding = nil
    else
      drive_to(t[1], t[2])
      if (t[1] - p.x)^2 + (t[2] - p.y)^2 < 4 then table.remove(avoiding.trajectory, 1) end
      return
    end
  end
  avoiding = nil
  if type == RECHARGE then
    if (station[1] - p.x)^2 + (station[2] - p.y)^2 > 4 then
      drive_to(station[1], station[2])
    else
      robot.deeco_wheels.set_action(0, 0)
    end
  elseif type == FOLLOW then
    drive_to(order[2], order[3])
  else
    robot.deeco_wheels.set_action(0, 0)
  end
end
