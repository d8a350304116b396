-- The competition's stations: the command station is team red's (1), the power station team
-- blue's (2) (their teamID), in their knowledge from the first cycle. The command station
-- also assigns its robots' orders (the playground's CommandStation.assigning): from its
-- robots' places and energies (knowledge `placements`: per robot number x, y, energy, 1 when
-- known; OrderEnsemble's) and the items out (`items`: per item number x, y, 1;
-- ItemPositionSignal's), each robot below 80 energy (or below 300 once recharging) is sent
-- to recharge, each other one to the nearest item no nearer robot was sent to (every pair
-- of a robot and an item by squared distance), else to stay (`orders`: per robot number
-- type, x, y; 1 stay, 2 follow, 3 recharge).
local STAY, FOLLOW, RECHARGE = 1, 2, 3

local function assign()
  local placements, items, orders = object.knowledge.placements, object.knowledge.items,
                                    object.knowledge.orders
  local pairs_ = {}
  for t = 0, 3 do
    if placements[4 * t + 4] ~= 0 then
      for i = 0, 7 do
        if items[3 * i + 3] ~= 0 then
          local d = (placements[4 * t + 1] - items[3 * i + 1])^2 +
                    (placements[4 * t + 2] - items[3 * i + 2])^2
          pairs_[#pairs_ + 1] = {t = t, i = i, d = d}
        end
      end
    end
  end
  table.sort(pairs_, function(a, b)
    if a.d ~= b.d then return a.d < b.d end
    if a.t ~= b.t then return a.t < b.t end
    return a.i < b.i
  end)
  local robot_taken, item_taken, chosen = {}, {}, {}
  for _, p in ipairs(pairs_) do
    if not robot_taken[p.t] and not item_taken[p.i] then
      robot_taken[p.t], item_taken[p.i], chosen[p.t] = true, true, p.i
    end
  end
  for t = 0, 3 do
    if placements[4 * t + 4] ~= 0 then
      local energy = placements[4 * t + 3]
      local o = {STAY, 0, 0}
      if energy < 80 or (orders[3 * t + 1] == RECHARGE and energy < 300) then
        o = {RECHARGE, 0, 0}
      elseif chosen[t] then
        o = {FOLLOW, items[3 * chosen[t] + 1], items[3 * chosen[t] + 2]}
      end
      orders[3 * t + 1], orders[3 * t + 2], orders[3 * t + 3] = o[1], o[2], o[3]
    end
  end
  object.knowledge.orders = orders
end

function step()
  local command = object.class:find("CommandStation") ~= nil
  object.knowledge.team = command and 1 or 2
  if command then assign() end
end
