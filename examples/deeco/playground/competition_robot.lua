-- The DEECo playground's competition AutonomousRobot (its assigning and decision processes):
-- it recharges at its team's station below 80 energy until full, else drives to the nearest
-- item it knows of, else stays; on a contact ahead (within 90 degrees of its heading) it backs
-- off 6 units from the contact and goes 13 units at 45 degrees away from it before going on
-- (its avoidance trajectory; not near its station while recharging). Its team is TEAM (set by
-- blue_robot.lua). Knowledge: team, station (the station's x, y, from
-- ChargerPositionEnsemble), item (the nearest item's x, y and squared distance, -1 for none,
-- that no enemy heads for from nearer: from ItemPositionSignal, with the enemy's orders and
-- places that HackEnsemble reads from the command station). Its tag is its energy; a robot
-- without energy stops and is tagged BROKEN. Distances are compared squared, as the
-- playground's Geometry.distance gives them.
local recharging = false
local trajectory = {}

local function drive_to(p, yaw, x, y)
  robot.deeco_wheels.set_action(1, math.atan(y - p.y, x - p.x) - yaw)
end

local function contact_ahead()
  local found = nil
  for i = 1, #robot.collision do
    local a = robot.collision[i].angle
    if a < math.pi / 2 and a > -math.pi / 2 then found = a end
  end
  return found
end

function step()
  robot.knowledge.team = TEAM
  local energy = robot.layer("energy", "number")
  robot.set_tag(energy > 0 and string.format("%d", energy) or "BROKEN")
  if energy <= 0 then
    robot.deeco_wheels.set_action(0, 0)
    return
  end
  local p = robot.positioning.position
  local yaw = robot.positioning.orientation:toeulerangles()
  recharging = energy < 80 or (recharging and energy < 300)
  local station = robot.knowledge.station
  local item = robot.knowledge.item
  local target = nil
  if recharging and (station[1] ~= 0 or station[2] ~= 0) then
    if (station[1] - p.x)^2 + (station[2] - p.y)^2 > 4 then target = {station[1], station[2]} end
  elseif not recharging and item[3] >= 0 then
    target = {item[1], item[2]}
  end
  local a = contact_ahead()
  local near_station = (station[1] - p.x)^2 + (station[2] - p.y)^2 <= 40
  if target and a and not (recharging and near_station) then
    local back = yaw + math.pi + a
    local x1, y1 = p.x + 6 * math.cos(back), p.y + 6 * math.sin(back)
    local away = yaw + (a < 0 and math.pi / 4 or -math.pi / 4)
    trajectory = {{x1, y1}, {x1 + 13 * math.cos(away), y1 + 13 * math.sin(away)}}
  end
  if target and #trajectory > 0 then
    local t = trajectory[1]
    if (t[1] - p.x)^2 + (t[2] - p.y)^2 < 4 then table.remove(trajectory, 1) end
    if #trajectory > 0 then target = trajectory[1] end
  end
  if target then
    drive_to(p, yaw, target[1], target[2])
  else
    trajectory = {}
    robot.deeco_wheels.set_action(0, 0)
  end
end
