#!/usr/bin/python3
"""fleetsim's side of the ARGoS3 comparison (docs/benchmarks.md, "Against ARGoS3, side by side").

Runs `fleetsim run` on footbot_lua_10k.argos (10,000 foot-bots, Lua diffusion with
range-and-bearing and the camera on, dynamics2d), or on a copy of it with fewer robots in an
arena scaled to keep one robot per square metre, and prints one JSON line: the run's own
summary (`--json`: loop wall seconds, CPU seconds, robot-steps/s) and the process's wall and
CPU time. ARGoS is not needed: its side is the `argos3 -c` command documented with the figures.

  bench/argos/run_fleetsim.py --robots 1000 --threads 2 --length 10 [--fleetsim build/fleetsim]
"""
import argparse
import json
import math
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ARGOS = os.path.join(HERE, "footbot_lua_10k.argos")
SCRIPT = "diffusion_rab_camera.lua"


def scaled_copy(robots, directory):
    """footbot_lua_10k.argos with `robots` robots on a square of `robots` m² (walls around it)."""
    text = open(ARGOS).read()
    if robots == 10000:
        return ARGOS
    half = math.sqrt(robots) / 2
    fmt = lambda v: ("%.3f" % v).rstrip("0").rstrip(".")
    text = text.replace('quantity="10000"', 'quantity="%d"' % robots)
    text = text.replace('size="104, 104, 1"', 'size="%s, %s, 1"' % (fmt(2 * half + 4), fmt(2 * half + 4)))
    text = re.sub(r'"-50,-50,0"', '"-%s,-%s,0"' % (fmt(half), fmt(half)), text)
    text = re.sub(r'"50,50,0"', '"%s,%s,0"' % (fmt(half), fmt(half)), text)
    for a, b in (("102", fmt(2 * half + 2)), ("51", fmt(half + 1))):
        text = re.sub(r'(?<=[",-])%s(?=[",])' % a, b, text)
    path = os.path.join(directory, "footbot_lua_%d.argos" % robots)
    with open(path, "w") as f:
        f.write(text)
    os.symlink(os.path.join(HERE, SCRIPT), os.path.join(directory, SCRIPT))
    return path


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--robots", type=int, default=10000)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--length", type=float, default=10.0, help="simulated seconds (10 ticks each)")
    p.add_argument("--fleetsim", default=os.path.join(HERE, "..", "..", "build", "fleetsim"))
    p.add_argument("--write-argos", metavar="DIR", help="only write the scaled .argos copy into DIR")
    a = p.parse_args()
    if a.write_argos:
        os.makedirs(a.write_argos, exist_ok=True)
        print(scaled_copy(a.robots, a.write_argos))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        path = scaled_copy(a.robots, tmp)
        cmd = [a.fleetsim, "run", path, "--threads", str(a.threads), "--length", str(a.length),
               "--log", "", "--quiet", "--json"]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        out = subprocess.run(cmd, capture_output=True, text=True, cwd=HERE)
        wall = time.monotonic() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        return out.returncode
    run = json.loads(out.stdout.strip().splitlines()[-1])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    steps = run["robots"] * run["ticks"]
    # The loop's CPU time between the script's first and last `bench-tick` lines (os.clock(),
    # the process's CPU time), as run_argos.py measures ARGoS's.
    marks = {int(t): float(c) for t, c in re.findall(r"bench-tick (\d+) (\S+)", out.stderr)}
    first, last = (min(marks), max(marks)) if len(marks) >= 2 else (None, None)
    loop_cpu = marks[last] - marks[first] if first is not None else None
    print(json.dumps({
        "bench": "argos_side_by_side", "program": "fleetsim", "robots": run["robots"],
        "threads": a.threads, "ticks": run["ticks"], "state_hash": run["state_hash"],
        "loop_wall_seconds": run["loop_wall_seconds"],
        "robot_steps_per_second": run["robot_steps_per_second"],
        "process_wall_seconds": wall, "process_cpu_seconds": cpu,
        "robot_steps_per_process_cpu_second": steps / cpu if cpu > 0 else None,
        "ticks_timed": (last - first) if first is not None else None, "from_tick": first,
        "loop_cpu_seconds": loop_cpu,
        "robot_steps_per_cpu_second": run["robots"] * (last - first) / loop_cpu if loop_cpu else None,
        "command": " ".join(cmd)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
