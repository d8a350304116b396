"""Batched stepping from Python (docs/benchmarks.md, "Environments for learning"): W worlds of
R e-pucks whose controller is `external`, proximity observations, wheel speeds from a linear
policy in numpy, a reward computed in C++ (minus the distance to the arena's centre, and
collisions). Prints one JSON line: robot-steps per second of the whole loop (and per CPU second,
with cpu_usage = CPU seconds / wall seconds and the load average: on a shared machine the
per-CPU figure is the one that does not depend on the others' load), and the share of
the loop spent in Python (the policy in numpy and the loop: everything outside env.step, whose
Python wrapper is a few microseconds of a step of milliseconds), by wall time and by CPU time
(python_cpu_share: the CPU seconds of the policy over the process's, which the others' load
does not change).

    PYTHONPATH=build/python python3 bench/python/env_bench.py --worlds 64 --robots 100

With --resets N it measures the start of an episode instead: the seconds of env.reset(seed=i)
(every world's experiment reset with a new seed: the robots placed anew, the controllers' and
loop functions' reset) against those of loading the experiment and starting a run, per world
(Env's construction over the worlds: what an episode's start cost when each episode loaded the
file again), medians of N. --lua R adds R robots per world driven by a Lua controller (one Lua
state per robot), whose load is the costly part of a new run.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np

import fleetsim

SCENE = """<?xml version="1.0"?>
<fleetsim>
  <framework ticks_per_second="10" length="100000" seed="1"/>
  <controllers><controller id="policy" type="external"/>{lua_controller}</controllers>
  <arena size="{side},{side}">
    <distribute count="{robots}" kind="epuck" controller="policy" id_prefix="ep"
                region="-{half},-{half},{half},{half}"/>{lua_robots}
  </arena>
</fleetsim>
"""

# A Lua controller with state, init() and reset(): avoids obstacles by its proximity sensor.
LUA = """
turns = 0
function init() turns = 0 end
function reset() turns = 0 end
function step()
  local front = robot.proximity[1].value + robot.proximity[8].value
  if front > 0.2 then turns = turns + 1; robot.wheels.set_velocity(-3, 3)
  else robot.wheels.set_velocity(5, 5) end
end
"""


def reset_bench(path, args):
    """Median seconds of an episode's start per world: the experiment's reset, and a new run."""
    loads, resets = [], []
    for i in range(args.resets):
        start = time.perf_counter()
        env = fleetsim.Env(path, args.worlds, observations=["proximity"], threads=args.threads)
        loads.append((time.perf_counter() - start) / args.worlds)
        if i == 0:
            for k in range(args.resets):
                start = time.perf_counter()
                env.reset(seed=k + 1)
                resets.append((time.perf_counter() - start) / args.worlds)
        env.close()
    loads.sort()
    resets.sort()
    load, reset = loads[len(loads) // 2], resets[len(resets) // 2]
    print(json.dumps({
        "benchmark": "env_reset", "worlds": args.worlds, "robots": args.robots,
        "lua_robots": args.lua, "threads": args.threads, "runs": args.resets,
        "new_run_ms_per_world": round(load * 1e3, 3),
        "reset_ms_per_world": round(reset * 1e3, 3),
        "speedup": round(load / reset, 1), "load": round(os.getloadavg()[0], 2)}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worlds", type=int, default=64)
    ap.add_argument("--robots", type=int, default=100, help="robots per world")
    ap.add_argument("--steps", type=int, default=300, help="steps measured")
    ap.add_argument("--warmup", type=int, default=20, help="steps before measuring")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--density", type=float, default=5.0, help="robots per square metre")
    ap.add_argument("--resets", type=int, default=0,
                    help="measure N episode starts (reset against a new run) instead")
    ap.add_argument("--lua", type=int, default=0, help="robots with a Lua controller per world")
    args = ap.parse_args()

    side = ((args.robots + args.lua) / args.density) ** 0.5 + 0.5
    half = round(side / 2 - 0.25, 3)
    directory = tempfile.mkdtemp(prefix="env-bench-")
    path = os.path.join(directory, "env.xml")
    with open(os.path.join(directory, "walk.lua"), "w") as f:
        f.write(LUA)
    with open(path, "w") as f:
        f.write(SCENE.format(
            side=round(side, 3), half=half, robots=args.robots,
            lua_controller='<controller id="walk" type="lua" script="walk.lua"/>' if args.lua
            else "",
            lua_robots=f'<distribute count="{args.lua}" kind="epuck" controller="walk" '
                       f'id_prefix="lua" region="-{half},-{half},{half},{half}"/>' if args.lua
            else ""))
    try:
        if args.resets:
            reset_bench(path, args)
            return
        env = fleetsim.Env(path, args.worlds, observations=["proximity"],
                           rewards={"target": (0.0, 0.0), "collision": 1.0},
                           threads=args.threads)
    finally:
        shutil.rmtree(directory)
    rng = np.random.default_rng(1)
    weights = rng.normal(scale=0.05, size=(env.obs_dim, env.action_dim))
    left, right = np.ascontiguousarray(weights[:, 0]), np.ascontiguousarray(weights[:, 1])
    bias = np.array([0.08, 0.1])
    high = [float(h) for h in env.single_action_space.high]
    actions = np.empty((env.num_worlds, env.num_agents, env.action_dim))
    obs, _ = env.reset(seed=1)

    flat_actions = actions.reshape(-1, env.action_dim)  # every world's robots, one row each
    wheel = np.empty(env.num_worlds * env.num_agents)

    def loop(steps):
        """Returns the wall seconds inside env.step and the CPU seconds outside it."""
        in_engine = python_cpu = 0.0
        nonlocal obs
        for _ in range(steps):
            c = time.thread_time()
            # Each wheel's speed: a matrix-vector product over all worlds' robots at once (two
            # of them cost half of one (N, 8) x (8, 2) product with Debian's reference BLAS),
            # its bias and bounds on the contiguous result (np.minimum and np.maximum: np.clip
            # with scalar bounds costs about 14 us a call in Debian's numpy 1.24, against 2 us),
            # then into the actions' column: about 32 us for 1,000 robots.
            flat_obs = obs.reshape(-1, env.obs_dim)
            for k, (w, b) in enumerate(((left, bias[0]), (right, bias[1]))):
                np.dot(flat_obs, w, out=wheel)
                np.add(wheel, b, out=wheel)
                np.minimum(wheel, high[k], out=wheel)
                np.maximum(wheel, -high[k], out=wheel)
                flat_actions[:, k] = wheel
            t = time.perf_counter()
            python_cpu += time.thread_time() - c
            obs, rewards, term, trunc, infos = env.step(actions)
            in_engine += time.perf_counter() - t
        return in_engine, python_cpu

    loop(args.warmup)
    start, cpu = time.perf_counter(), time.process_time()
    in_engine, python_cpu = loop(args.steps)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    env.close()
    robot_steps = args.worlds * env.num_agents * args.steps
    print(json.dumps({
        "benchmark": "env", "worlds": args.worlds, "robots": env.num_agents,
        "threads": args.threads, "steps": args.steps, "wall_s": round(wall, 4),
        "robot_steps_per_s": round(robot_steps / wall),
        "python_share": round((wall - in_engine) / wall, 4),
        "python_cpu_share": round(python_cpu / cpu, 4),
        "cpu_usage": round(cpu / wall, 3),
        "robot_steps_per_cpu_s": round(robot_steps / cpu),
        "load": round(os.getloadavg()[0], 2),
        "obs_dim": env.obs_dim, "python": sys.version.split()[0]}))


if __name__ == "__main__":
    main()
