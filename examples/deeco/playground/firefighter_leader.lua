-- The DEECo playground's firefighters FirefighterLeader: a drone (firefighter_drone.lua) that
-- also assigns orders (its assigning process). It keeps the team's places and energies
-- (knowledge `team`: per firefighter number 0 to 4, x, y, energy, 1 when known; filled by the
-- DataAggregationAndOrderDistribution ensemble and by itself), and gives each an order
-- (knowledge `orders`, three numbers per number: type, x, y): recharge below 300 energy (and
-- until 1350 once recharging), else the nearest fire not taken by a nearer firefighter (fight
-- it within 4 units, else follow it), else stay. Below 300 energy of its own it leaves the
-- controlled mode and tells the team it has no data (knowledge `data_available`, read by the
-- ModeSwitch ensemble); above, it takes them back.
LEADER = true
local TEAM = 5
local STAY, FOLLOW, FIGHT, RECHARGE = 1, 2, 3, 4

function leader_orders(e, ctx)
  local me = robot.knowledge.fid
  local available = robot.knowledge.data_available
  if ctx.energy < 300 and robot.knowledge.controlled ~= 0 then
    robot.knowledge.controlled, available = 0, 0
  elseif ctx.energy > 300 and robot.knowledge.controlled == 0 then
    robot.knowledge.controlled, available = 1, 1
  end
  robot.knowledge.data_available = available
  local team = robot.knowledge.team
  team[4 * me + 1], team[4 * me + 2], team[4 * me + 3], team[4 * me + 4] =
    ctx.x, ctx.y, ctx.energy, 1
  robot.knowledge.team = team
  local fires = {}
  for k = 1, e[5] do fires[k] = {e[4 + 2 * k], e[5 + 2 * k]} end
  -- Every (firefighter, fire) by distance; each keeps its nearest fire no nearer one took.
  local pairs_ = {}
  for f = 0, TEAM - 1 do
    if team[4 * f + 4] ~= 0 then
      for k, fire in ipairs(fires) do
        local d = (team[4 * f + 1] - fire[1])^2 + (team[4 * f + 2] - fire[2])^2
        pairs_[#pairs_ + 1] = {f = f, k = k, d = d}
      end
    end
  end
  table.sort(pairs_, function(a, b)
    if a.d ~= b.d then return a.d < b.d end
    if a.f ~= b.f then return a.f < b.f end
    return a.k < b.k
  end)
  local taken_f, taken_k, chosen = {}, {}, {}
  for _, p in ipairs(pairs_) do
    if not taken_f[p.f] and not taken_k[p.k] then
      taken_f[p.f], taken_k[p.k], chosen[p.f] = true, true, p
    end
  end
  local orders = robot.knowledge.orders
  for f = 0, TEAM - 1 do
    if team[4 * f + 4] ~= 0 then
      local energy, current = team[4 * f + 3], orders[3 * f + 1]
      local o = {STAY, 0, 0}
      if energy < 300 or (current == RECHARGE and energy < 1350) then
        o = {RECHARGE, 0, 0}
      elseif chosen[f] then
        local fire = fires[chosen[f].k]
        o = {chosen[f].d < 16 and FIGHT or FOLLOW, fire[1], fire[2]}
      end
      orders[3 * f + 1], orders[3 * f + 2], orders[3 * f + 3] = o[1], o[2], o[3]
    end
  end
  robot.knowledge.orders = orders
  return {orders[3 * me + 1], orders[3 * me + 2], orders[3 * me + 3]}
end

require "firefighter_drone"
