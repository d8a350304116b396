-- The DEECo playground's competition ensembles, one file per ensemble type below, chosen by
-- the global ENSEMBLE (set by the small files that require this one).
local ensembles = {}

-- CollectEnsemble: an item (coordinator) is found by the first robot (member) within 2
-- field units, in id order; the robot's team scores it.
ensembles.collect = {
  membership = function(c, m) return c.knowledge.found == 0 and c.size > 0 end,
  exchange = function(c, m)
    if (c.x - m.x)^2 + (c.y - m.y)^2 < 4 then
      c.knowledge.found = 1
      if m.knowledge.team == 1 then c.knowledge.t1 = c.knowledge.t1 + 1 end
      if m.knowledge.team == 2 then c.knowledge.t2 = c.knowledge.t2 + 1 end
    end
  end,
}

-- An enemy (of the hacked command station's team: knowledge enemy_orders, enemy_placements,
-- from HackEnsemble) following the item at (x, y) and nearer to it than d (squared).
local function enemy_is_closer(c, x, y, d)
  local orders, placements = c.knowledge.enemy_orders, c.knowledge.enemy_placements
  for t = 0, 3 do
    if orders[3 * t + 1] == 2 and orders[3 * t + 2] == x and orders[3 * t + 3] == y
       and placements[4 * t + 4] ~= 0
       and (x - placements[4 * t + 1])^2 + (y - placements[4 * t + 2])^2 < d then
      return true
    end
  end
  return false
end

-- ItemPositionSignal: a robot (coordinator) learns where the items that are out are (the
-- nearest one: its x, y and squared distance; -1 when none) that no enemy the hack shows
-- heads for from nearer (the AutonomousRobot's enemyIsCloser); the command station
-- (coordinator too, in a second ensemble of the class) learns all of them (knowledge items:
-- 8 times x, y, 1, the items out in id order, then zeros).
local out = 0
ensembles.items = {
  is_coordinator = function(r)
    if r.object then
      local none = {}
      for k = 1, 24 do none[k] = 0 end
      r.knowledge.items = none
      out = 0
    else
      r.knowledge.item = {0, 0, -1}
    end
    return true
  end,
  membership = function(c, m) return m.size > 0 and m.knowledge.found == 0 end,
  exchange = function(c, m)
    if c.object then
      local items = c.knowledge.items
      items[3 * out + 1], items[3 * out + 2], items[3 * out + 3] = m.x, m.y, 1
      c.knowledge.items = items
      out = out + 1
      return
    end
    local d = (c.x - m.x)^2 + (c.y - m.y)^2
    local known = c.knowledge.item
    if (known[3] < 0 or d < known[3]) and not enemy_is_closer(c, m.x, m.y, d) then
      c.knowledge.item = {m.x, m.y, d}
    end
  end,
}

-- OrderEnsemble: the command station (coordinator) learns where each of its robots is and
-- its energy (the robot's status into the station's placements, at the robot's number) and
-- gives it its order (the station's orders at its number into its order).
ensembles.order = {
  exchange = function(c, m)
    local k = m.knowledge.tmid
    local status, placements = m.knowledge.status, c.knowledge.placements
    if status[4] ~= 0 then
      for i = 1, 4 do placements[4 * k + i] = status[i] end
      c.knowledge.placements = placements
    end
    local orders = c.knowledge.orders
    m.knowledge.order = {orders[3 * k + 1], orders[3 * k + 2], orders[3 * k + 3]}
  end,
}

-- HackEnsemble: team blue's robots (members) read the command station's orders and
-- placements (coordinator) as their enemies'.
ensembles.hack = {
  exchange = function(c, m)
    m.knowledge.enemy_orders = c.knowledge.orders
    m.knowledge.enemy_placements = c.knowledge.placements
  end,
}

-- ScoreUpdate and StatusUpdate: the counter (coordinator) sums the items' scores; the run's
-- status shows them; the first team to 30 wins and ends the run.
ensembles.score = {
  is_coordinator = function(c) c.knowledge.t1, c.knowledge.t2 = 0, 0; return true end,
  exchange = function(c, m)
    c.knowledge.t1 = c.knowledge.t1 + m.knowledge.t1
    c.knowledge.t2 = c.knowledge.t2 + m.knowledge.t2
    local a, b = c.knowledge.t1, c.knowledge.t2
    if a >= 30 then status("CYCLE: " .. tick() .. "; Team Red wins the game!"); end_run()
    elseif b >= 30 then status("CYCLE: " .. tick() .. "; Team Blue wins the game!"); end_run()
    else status("CYCLE: " .. tick() .. "; SCORE: " .. a .. "/" .. b) end
  end,
}

-- ChargerPositionEnsemble: a power station (coordinator) tells the robots of its team where
-- it is.
ensembles.charger = {
  membership = function(c, m)
    return c.tag == "Power Station" and m.knowledge.team > 0 and c.knowledge.team == m.knowledge.team
  end,
  exchange = function(c, m) m.knowledge.station = {c.x, c.y} end,
}

for name, f in pairs(ensembles[ENSEMBLE]) do _G[name] = f end
