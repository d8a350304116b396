-- An ensemble in Lua (examples/deeco/gossip.xml): every robot coordinates the robots within
-- the element's `within`; each counts its neighbours into its knowledge. is_coordinator runs
-- for every robot before any pair (in id order), so it resets the count.
function is_coordinator(r)
  r.knowledge.neighbours = 0
  return true
end

function exchange(c, m)
  c.knowledge.neighbours = c.knowledge.neighbours + 1
end
