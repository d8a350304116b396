-- A robot of examples/deeco/gossip.xml: the scout knows where the base is and keeps that
-- news fresh; the others wander (the playground's SimpleRobot) until the ensembles bring them
-- the news, then head for the base, green.
local base_x, base_y = 0.0, 0.0
local ticks = 0

function step()
  ticks = ticks + 1
  if robot.id == "scout" then
    robot.knowledge.base = {ticks, base_x, base_y}
  end
  local c = robot.collision
  local heard = robot.knowledge.base
  if #c > 0 and c.action.type ~= "rotate" then
    robot.deeco_wheels.set_action(0, math.pi / 2 + robot.random.uniform(0, math.pi))
  elseif heard[1] > 0 then
    local p = robot.positioning.position
    local yaw = robot.positioning.orientation:toeulerangles()
    local dx, dy = heard[2] - p.x, heard[3] - p.y
    local turn = math.atan(dy, dx) - yaw
    turn = math.atan(math.sin(turn), math.cos(turn))
    local near = math.sqrt(dx * dx + dy * dy) < 0.3
    robot.deeco_wheels.set_action(near and 0 or 0.6, near and 0 or turn)
    robot.leds.set_all_colors("green")
  else
    robot.deeco_wheels.set_action(1, 0)
    robot.leds.set_all_colors(robot.knowledge.neighbours > 2 and "yellow" or "red")
  end
end
