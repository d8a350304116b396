-- The DEECo playground's firefighters StationEnsemble: a "Charging Station" object tells every
-- robot where it is (knowledge `charger`: 1, x, y).
function membership(c, m) return c.tag == "Charging Station" end
function exchange(c, m) m.knowledge.charger = {1, c.x, c.y} end
