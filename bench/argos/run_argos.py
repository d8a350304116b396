#!/usr/bin/python3
"""ARGoS3's side of the comparison (docs/benchmarks.md, "Against ARGoS3, side by side").

Runs ARGoS's own program, `argos3 -z -c`, on footbot_lua_10k.argos (or the copy with fewer
robots that run_fleetsim.py writes), with `<system threads=T>`, and times its main loop from
the `bench-tick` lines robot fb0's script writes to stderr every 10 ticks (tick, os.clock()):
wall time between their arrivals, process CPU time between their clocks. ARGoS is stopped after
the last tick timed: its teardown removes robots one at a time, each removal updating the
media's indices (minutes at 1,000 robots). Needs an ARGoS3 build; fleetsim's bench does not.

  bench/argos/run_argos.py --argos3 /opt/argos3/bin/argos3 --robots 1000 --threads 2 --from 10 --ticks 50
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_fleetsim  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--argos3", required=True, help="ARGoS's argos3 program (ARGOS_PLUGIN_PATH set)")
    p.add_argument("--robots", type=int, default=10000)
    p.add_argument("--threads", type=int, default=1, help="<system threads>")
    p.add_argument("--from", dest="start", type=int, default=10, help="first tick timed (a multiple of 10)")
    p.add_argument("--ticks", type=int, default=50, help="ticks timed (a multiple of 10)")
    a = p.parse_args()
    end = a.start + a.ticks
    with tempfile.TemporaryDirectory() as tmp:
        path = run_fleetsim.scaled_copy(a.robots, tmp)
        text = open(path).read()
        text = re.sub(r'<system threads="\d+" />', '<system threads="%d" />' % a.threads, text)
        text = re.sub(r'length="\d+"', 'length="%d"' % (end // 10 + 10), text)
        run = os.path.join(tmp, "run.argos")
        open(run, "w").write(text)
        t0 = time.monotonic()
        proc = subprocess.Popen([a.argos3, "-z", "-c", run], cwd=run_fleetsim.HERE,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        marks = {}
        for line in proc.stderr:
            m = re.match(r"bench-tick (\d+) (\S+)", line)
            if m:
                marks[int(m.group(1))] = (time.monotonic(), float(m.group(2)))
                if int(m.group(1)) >= end:
                    break
        proc.kill()
        proc.wait()
    if a.start not in marks or end not in marks:
        sys.stderr.write("ARGoS stopped before tick %d\n" % end)
        return 1
    wall = marks[end][0] - marks[a.start][0]
    cpu = marks[end][1] - marks[a.start][1]
    steps = a.robots * a.ticks
    print(json.dumps({
        "bench": "argos_side_by_side", "program": "argos3", "robots": a.robots, "threads": a.threads,
        "ticks_timed": a.ticks, "from_tick": a.start, "loop_wall_seconds": wall, "loop_cpu_seconds": cpu,
        "robot_steps_per_second": steps / wall, "robot_steps_per_cpu_second": steps / cpu,
        "seconds_to_first_tick_timed": marks[a.start][0] - t0}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
