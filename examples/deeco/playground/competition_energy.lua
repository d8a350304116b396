-- The DEECo playground's competition EnergyProcessor as an environment layer (the sensor
-- "energy"): every robot starts with 300 (the layer's initial); a robot that moved since the
-- last cycle pays 1; a robot whose centre is within a "Power Station"'s half side of its centre
-- gets 30, up to 300. (The playground charges a robot whose action is not "stay"; a robot
-- that does not move here pays nothing.)
local last = {}
function value(r)
  local e = r.value
  local before = last[r.number]
  if before and (before.x ~= r.x or before.y ~= r.y) then e = e - 1 end
  last[r.number] = {x = r.x, y = r.y}
  for _, o in ipairs(layer.objects) do
    local half = o.size / 2
    if o.tag == "Power Station" and (o.x - r.x)^2 + (o.y - r.y)^2 < half * half then
      e = e < 300 - 30 and e + 30 or 300
    end
  end
  return e
end
function reset() last = {} end
