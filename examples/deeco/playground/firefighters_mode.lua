-- The DEECo playground's firefighters ModeSwitch: a firefighter leaves the controlled mode
-- while the leader (the coordinator) has no data, and comes back to it when it has.
function exchange(c, m)
  local available = c.knowledge.data_available ~= 0
  if not available and m.knowledge.controlled ~= 0 then m.knowledge.controlled = 0 end
  if available and m.knowledge.controlled == 0 then m.knowledge.controlled = 1 end
end
