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

-- ItemPositionSignal: a robot (coordinator) learns where the items that are out are (the
-- nearest one: its x, y and squared distance; -1 when none).
ensembles.items = {
  is_coordinator = function(r) r.knowledge.item = {0, 0, -1}; return true end,
  membership = function(c, m) return m.size > 0 and m.knowledge.found == 0 end,
  exchange = function(c, m)
    local d = (c.x - m.x)^2 + (c.y - m.y)^2
    local known = c.knowledge.item
    if known[3] < 0 or d < known[3] then c.knowledge.item = {m.x, m.y, d} end
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
