-- The DEECo playground's firefighters EnergyTemperatureProcessor and its TemperatureMap as an
-- environment layer (the sensor "energy"), of 21 numbers per robot: energy, damage, the
-- highest temperature within the robot's radius, the angle to it from the robot's heading
-- (radians, CCW; 0 when the hottest is under the robot), the number of fires the robot last
-- asked for (at most 8) and their x, y (metres).
--
-- The map: a temperature (an integer 0 to 250) per field unit, random below 40 at first. Each
-- cycle every inner cell becomes the mean of its four neighbours and the border random below
-- 40; a cell between 40 and 80 cools by 0 to 4, any other below 250 warms by 0 to 4; with
-- probability 1/7 a fire starts at a random cell 5 units from the border or more, and every
-- fire holds its cell at 250; then every active extinguisher cools the 7 x 7 cells around its
-- robot by 20 and takes one of the 5 points of each fire among them (a fire at 0 goes out).
--
-- The robots' actions are their deeco_wheels' (extras="extinguisher request"): an active
-- extinguisher costs 5 energy a cycle, a request of the fires' places 50 (the robot's list of
-- fires is updated only then), any action but "stay" 1. A robot within the half side of a
-- "Charging Station" of its centre gets 100, up to 1500; one where the highest temperature is
-- above 40 loses (t - 40) // 10 (its damage). Energies start at 1500.
local MAX_ENERGY, MOVING, COOLING, KNOWLEDGE, CHARGING = 1500, 1, 5, 50, 100
local THRESHOLD, GENERATOR, SEED, EXTINGUISHER, COOL = 40, 7, 5, 3, 20
local MAX_FIRES = 8

local nx, ny, map, fires, robots

local function rnd(n) return math.floor(layer.random.uniform() * n) end

local function start()
  assert(layer.arena.min_x == 0 and layer.arena.min_y == 0, "expected a field from 0, 0")
  nx = math.floor(layer.arena.max_x - layer.arena.min_x)
  ny = math.floor(layer.arena.max_y - layer.arena.min_y)
  map, fires, robots = {}, {}, {}
  for i = 0, nx - 1 do
    map[i] = {}
    for j = 0, ny - 1 do map[i][j] = rnd(THRESHOLD) end
  end
end

local function next_cycle(extinguishers)
  local new = {}
  for i = 0, nx - 1 do
    local col = {}
    new[i] = col
    for j = 0, ny - 1 do
      local v
      if i == 0 or j == 0 or i == nx - 1 or j == ny - 1 then
        v = rnd(THRESHOLD)
      else
        v = (map[i + 1][j] + map[i - 1][j] + map[i][j + 1] + map[i][j - 1]) // 4
      end
      if v > THRESHOLD and v < 2 * THRESHOLD then
        v = v - rnd(5)
      elseif v < 250 then
        v = v + rnd(5)
      end
      col[j] = v
    end
  end
  if layer.random.uniform() * GENERATOR < 1 then
    local x = math.floor(layer.random.uniform() * (nx - 10) + 5)
    local y = math.floor(layer.random.uniform() * (ny - 10) + 5)
    fires[#fires + 1] = {x = x, y = y, value = SEED}
    log("tick " .. layer.tick .. ": a fire starts at " .. x .. ", " .. y)
  end
  for k = #fires, 1, -1 do
    local f = fires[k]
    if f.value > 0 then
      new[f.x][f.y] = 250
    else
      log("tick " .. layer.tick .. ": the fire at " .. f.x .. ", " .. f.y .. " is out")
      table.remove(fires, k)
    end
  end
  map = new
  for _, e in ipairs(extinguishers) do
    for i = e.x - EXTINGUISHER, e.x + EXTINGUISHER do
      for j = e.y - EXTINGUISHER, e.y + EXTINGUISHER do
        if i >= 0 and j >= 0 and i < nx and j < ny then
          map[i][j] = map[i][j] - COOL
          for _, f in ipairs(fires) do
            if f.x == i and f.y == j then f.value = f.value - 1 end
          end
        end
      end
    end
  end
  for i = 0, nx - 1 do
    local col = map[i]
    for j = 0, ny - 1 do col[j] = math.max(0, math.min(250, col[j])) end
  end
end

local function wrap(a) return math.atan(math.sin(a), math.cos(a)) end

function step()
  if not map then start() end
  local extinguishers = {}
  for _, r in ipairs(layer.robots) do
    local s = robots[r.number]
    if not s then
      s = {energy = MAX_ENERGY, damage = 0, fires = {}}
      robots[r.number] = s
    end
    local a = r.action
    if a and a.extinguisher ~= 0 then
      extinguishers[#extinguishers + 1] = {x = math.floor(r.x), y = math.floor(r.y)}
      s.energy = s.energy - COOLING
    end
    if a and a.request ~= 0 then
      s.fires = {}
      for k = 1, math.min(#fires, MAX_FIRES) do s.fires[k] = {fires[k].x, fires[k].y} end
      s.energy = s.energy - KNOWLEDGE
    end
  end
  next_cycle(extinguishers)
  for _, r in ipairs(layer.robots) do
    local s = robots[r.number]
    -- The highest temperature within the robot's radius (cells of a square around it).
    local x, y, size = math.floor(r.x), math.floor(r.y), math.floor(r.radius)
    local best = map[math.max(0, math.min(nx - 1, x))][math.max(0, math.min(ny - 1, y))]
    local angle = 0
    for i = x - size, x + size do
      for j = y - size, y + size do
        if i >= 0 and j >= 0 and i < nx and j < ny and map[i][j] > best then
          best = map[i][j]
          angle = wrap(math.atan(j - r.y, i - r.x) - r.heading)
        end
      end
    end
    s.temperature, s.vector, s.damage = best, angle, 0
    local a = r.action
    if a and (a.speed ~= 0 or a.angle ~= 0) then s.energy = s.energy - MOVING end
    for _, o in ipairs(layer.objects) do
      local half = o.size / 2
      if o.tag == "Charging Station" and (o.x - r.x)^2 + (o.y - r.y)^2 < half * half then
        s.energy = s.energy < MAX_ENERGY - CHARGING and s.energy + CHARGING or MAX_ENERGY
      end
    end
    if best > THRESHOLD then
      s.damage = (best - THRESHOLD) // 10
      s.energy = s.energy - s.damage
    end
  end
end

function value(r)
  local s = robots[r.number]
  local v = {s.energy, s.damage, s.temperature, s.vector, #s.fires}
  for k = 1, MAX_FIRES do
    local f = s.fires[k]
    v[#v + 1] = f and f[1] + 0.0 or 0
    v[#v + 1] = f and f[2] + 0.0 or 0
  end
  return v
end

function reset() map = nil end
