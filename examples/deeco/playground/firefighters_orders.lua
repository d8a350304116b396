-- The DEECo playground's firefighters DataAggregationAndOrderDistribution: the leader (the
-- coordinator) learns each firefighter's place and energy (its `status` into the leader's
-- `team`, at its number) and gives it its order (the leader's `orders` at its number into
-- its `order`).
function exchange(c, m)
  local f = m.knowledge.fid
  local status, team = m.knowledge.status, c.knowledge.team
  if status[4] ~= 0 then
    for k = 1, 4 do team[4 * f + k] = status[k] end
    c.knowledge.team = team
  end
  local orders = c.knowledge.orders
  m.knowledge.order = {orders[3 * f + 1], orders[3 * f + 2], orders[3 * f + 3]}
end
