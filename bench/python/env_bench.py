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
"""
import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np

import fleetsim

SCENE = """<?xml version="1.0"?>
<fleetsim>
  <framework ticks_per_second="10" length="100000" seed="1"/>
  <controllers><controller id="policy" type="external"/></controllers>
  <arena size="{side},{side}">
    <distribute count="{robots}" kind="epuck" controller="policy" id_prefix="ep"
                region="-{half},-{half},{half},{half}"/>
  </arena>
</fleetsim>
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worlds", type=int, default=64)
    ap.add_argument("--robots", type=int, default=100, help="robots per world")
    ap.add_argument("--steps", type=int, default=300, help="steps measured")
    ap.add_argument("--warmup", type=int, default=20, help="steps before measuring")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--density", type=float, default=5.0, help="robots per square metre")
    args = ap.parse_args()

    side = (args.robots / args.density) ** 0.5 + 0.5
    with tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False) as f:
        f.write(SCENE.format(side=round(side, 3), half=round(side / 2 - 0.25, 3),
                             robots=args.robots))
        path = f.name
    try:
        env = fleetsim.Env(path, args.worlds, observations=["proximity"],
                           rewards={"target": (0.0, 0.0), "collision": 1.0},
                           threads=args.threads)
    finally:
        os.unlink(path)
    rng = np.random.default_rng(1)
    weights = rng.normal(scale=0.05, size=(env.obs_dim, env.action_dim))
    left, right = np.ascontiguousarray(weights[:, 0]), np.ascontiguousarray(weights[:, 1])
    bias = np.array([0.08, 0.1])
    high = env.single_action_space.high
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
            # its bias and bounds on the contiguous result, then into the actions' column:
            # about 0.14 ms for 6,400 robots, against 0.25 ms with broadcasting over actions.
            flat_obs = obs.reshape(-1, env.obs_dim)
            for k, (w, b) in enumerate(((left, bias[0]), (right, bias[1]))):
                np.dot(flat_obs, w, out=wheel)
                np.add(wheel, b, out=wheel)
                np.clip(wheel, -high[k], high[k], out=wheel)
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
