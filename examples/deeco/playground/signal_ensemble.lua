-- The DEECo playground's SignalEnsemble (its examples/predator): the predator (coordinator)
-- tells every prey (member) where it is, and alerts those within 20 field units.
function exchange(c, m)
  m.knowledge.predator = {c.x, c.y}
  local dx, dy = c.x - m.x, c.y - m.y
  m.knowledge.alert = (dx * dx + dy * dy < 400) and 1 or 0
end
