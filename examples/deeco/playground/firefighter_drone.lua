-- The DEECo playground's firefighters FirefighterDrone (and, with LEADER set, the
-- FirefighterLeader of firefighter_leader.lua): its decision process, its modes and states.
--
-- Its inputs: the positioning sensor (the playground's "coords"), the collision sensor and the
-- layer "energy" (firefighters_energy.lua: energy, damage, highest temperature, its angle,
-- fires). Its action: deeco_wheels with extras="extinguisher request"; a robot without energy
-- does nothing. Its tag is its state's name (ROAM, FOLLOW, FIGHT, RECHARGE, AVOID), BROKEN
-- when its energy is gone.
--
-- Autonomous mode: ROAM goes straight, turning by a random angle up to pi one cycle in 20, and
-- follows heat above 45 (FOLLOW), whose source it fights (FIGHT: the extinguisher on, towards
-- the heat) when its damage is above 4 or the heat is under it; below 45 it roams again. Any
-- state but AVOID and RECHARGE goes RECHARGE below 300 energy when it knows the charger, and
-- RECHARGE roams again above 1000. A contact ahead (within 90 degrees of the heading) makes an
-- AVOID state: 6 units back from the contact, then 13 at 45 degrees away from it.
-- Controlled mode (while the leader has data): it executes the leader's order (knowledge
-- `order`: type, x, y; 1 stay, 2 follow, 3 fight, 4 recharge), avoiding obstacles on the way.
-- Knowledge: fid (its number), status (x, y, energy, 1) for the leader, order, controlled
-- (ModeSwitch's), charger (1, x, y; StationEnsemble's). Distances are compared squared, as the
-- playground's Geometry.distance gives them.
local STAY, FOLLOW, FIGHT, RECHARGE = 1, 2, 3, 4
local ctx = {}
local state = "ROAM"           -- the autonomous mode's state
local avoid = nil              -- an AVOID state: {trajectory, type}
local controlled_avoid = nil   -- the controlled mode's AVOID and the destination it was for
local controlled_destination = nil
local was_controlled = true

local function wrap(a) return math.atan(math.sin(a), math.cos(a)) end
local function d2(x1, y1, x2, y2) return (x1 - x2)^2 + (y1 - y2)^2 end
local function bearing(x, y) return wrap(math.atan(y - ctx.y, x - ctx.x) - ctx.yaw) end

local function set_action(speed, angle) ctx.speed, ctx.angle = speed, angle end

local function frontal_contact()
  local found = nil
  for i = 1, #robot.collision do
    local a = robot.collision[i].angle
    if a < math.pi / 2 and a > -math.pi / 2 then found = a end
  end
  return found
end

-- Algorithms.constructAvoidanceTrajectory: back 6 units from the contact, then 13 at 45
-- degrees to one side (which side alternates with `type`).
local function avoidance(type)
  local a = frontal_contact() or 0
  local back = ctx.yaw + math.pi
  local x1, y1 = ctx.x + 6 * math.cos(back), ctx.y + 6 * math.sin(back)
  local side = ((a < 0 and type % 2 == 0) or (a > 0 and type % 2 == 1)) and math.pi / 4
               or -math.pi / 4
  local turn = ctx.yaw + side
  return {{x1, y1}, {x1 + 13 * math.cos(turn), y1 + 13 * math.sin(turn)}}
end

local function new_avoid() return {trajectory = avoidance(0), type = 0} end

-- AvoidState.makeDecision and checkCollision: returns the state's name, or nil when done.
local function avoid_step(s)
  if frontal_contact() then
    s.type = s.type + 1
    s.trajectory = avoidance(s.type)
    table.remove(s.trajectory)
  end
  if #s.trajectory == 0 then return nil end
  local p = s.trajectory[1]
  set_action(1, bearing(p[1], p[2]))
  if d2(ctx.x, ctx.y, p[1], p[2]) < 4 then table.remove(s.trajectory, 1) end
  return "AVOID"
end

-- FirefighterState.pickAction for the four named states: the next state, or the same after
-- setting the action.
local function pick(name)
  ctx.extinguisher = false
  if name ~= "RECHARGE" or d2(ctx.x, ctx.y, ctx.charger[2], ctx.charger[3]) > 40 then
    if frontal_contact() then return "AVOID" end
  end
  if name ~= "RECHARGE" and ctx.energy < 300 and ctx.charger[1] ~= 0 then return "RECHARGE" end
  if name == "ROAM" then
    if ctx.temperature > 45 then return "FOLLOW" end
    set_action(1, 0)
    if robot.random.uniform() >= 0.95 then set_action(1, math.pi * robot.random.uniform()) end
  elseif name == "FOLLOW" then
    if ctx.damage > 4 or (ctx.vector == 0 and ctx.temperature >= 45) then return "FIGHT" end
    if ctx.temperature < 45 then return "ROAM" end
    set_action(1, ctx.vector)
  elseif name == "FIGHT" then
    if ctx.temperature < 45 then return "ROAM" end
    ctx.extinguisher = true
    set_action(1, ctx.vector)
  elseif name == "RECHARGE" then
    if ctx.energy > 1000 then return "ROAM" end
    set_action(1, bearing(ctx.charger[2], ctx.charger[3]))
  end
  return name
end

-- AutonomousMode.execute: states picked until one keeps itself.
local function autonomous()
  for _ = 1, 10 do
    local next
    if state == "AVOID" then
      next = avoid_step(avoid) or "ROAM"
      ctx.extinguisher = false
    else
      next = pick(state)
    end
    if next == state then return state end
    if next == "AVOID" then avoid = new_avoid() end
    state = next
  end
  return state
end

-- An order of the leader (FollowOrder, FightOrder, RechargeOrder, StayOrder).
local function execute(order)
  local type = order[1]
  if type == FOLLOW or type == FIGHT then
    ctx.extinguisher = type == FIGHT
    set_action(1, bearing(order[2], order[3]))
    return type == FIGHT and "FIGHT" or "FOLLOW"
  elseif type == RECHARGE then
    ctx.extinguisher = false
    if d2(ctx.x, ctx.y, ctx.charger[2], ctx.charger[3]) > 4 then
      set_action(1, bearing(ctx.charger[2], ctx.charger[3]))
    else
      set_action(0, 0)
    end
    return "RECHARGE"
  end
  set_action(0, 0)
  return "ROAM"
end

-- ControlledMode.execute.
local function controlled(order)
  if order[1] == 0 then return "ROAM" end
  local destination = (order[1] == FOLLOW or order[1] == FIGHT) and order[2] .. "," .. order[3]
                      or (order[1] == RECHARGE and "charger" or nil)
  if frontal_contact() then
    controlled_destination = destination
    controlled_avoid = new_avoid()
  end
  if controlled_destination ~= destination then controlled_avoid = nil end
  if controlled_avoid then
    ctx.extinguisher = false
    if avoid_step(controlled_avoid) then return "AVOID" end
    controlled_avoid = nil
  end
  return execute(order)
end

function step()
  robot.knowledge.fid = tonumber(robot.id:sub(2))
  local e = robot.layer("energy", "table")
  local p = robot.positioning.position
  ctx = {x = p.x, y = p.y, yaw = robot.positioning.orientation:toeulerangles(),
         energy = e[1], damage = e[2], temperature = e[3], vector = e[4],
         charger = robot.knowledge.charger, speed = 0, angle = 0, extinguisher = false}
  robot.knowledge.status = {p.x, p.y, ctx.energy, 1}
  local order = robot.knowledge.order
  if LEADER then order = leader_orders(e, ctx) end
  local is_controlled = robot.knowledge.controlled ~= 0
  if is_controlled ~= was_controlled then  -- a new mode starts afresh
    state, avoid, controlled_avoid, controlled_destination = "ROAM", nil, nil, nil
    was_controlled = is_controlled
  end
  local tag = is_controlled and controlled(order) or autonomous()
  if ctx.energy <= 0 then
    tag = "BROKEN"
    robot.deeco_wheels.set_action(0, 0, {0, 0})
  else
    -- The leader's wheels ask for the fires' places while its energy is above 300.
    local request = LEADER and ctx.energy > 300 and 1 or 0
    robot.deeco_wheels.set_action(ctx.speed, ctx.angle, {ctx.extinguisher and 1 or 0, request})
  end
  robot.set_tag(tag)
end
