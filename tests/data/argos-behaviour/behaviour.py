#!/usr/bin/python3
"""Behaviour of public ARGoS Lua scripts: ARGoS's figures and fleetsim's, compared.

Each case folder holds a copy of a collected .argos file (tests/data/argos/) that runs the
original script unchanged through wrapper.lua, which prints `POS <id> <tick> <x> <y> [...]`
once a simulated second. Both programs run the copy from the case folder, over the same seeds;
this script turns the lines into statistics a user notices (where robots end up, whether they
move, whether they gather or reach the light) and summarises them over the seeds.

  behaviour.py argos --argos3 /path/to/argos3 [--cases c1,c2]   # ARGoS's side: writes argos_figures.json
  behaviour.py compare --fleetsim build/fleetsim [--cases ...]    # the test: exit 1 when beyond tolerance

A statistic agrees when |fleetsim mean - ARGoS mean| <= tolerance, where tolerance =
max(3 * sqrt((sd_argos^2 + sd_fleetsim^2) / n), floor): three standard errors of the difference
of two means over the same n seeds, each program with its own spread across seeds (sd), and a
floor per statistic for those whose seeds hardly spread (below what a user could see). Statistics
listed in KNOWN_DIFFERENCES are reported but do not fail the test (docs/argos.md, "Behaviour
against ARGoS").
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FIGURES = os.path.join(HERE, "argos_figures.json")

# case -> (file, seeds, {statistic: (floor, description)})
CASES = {
    "aggregation_spot": ("blank_spot.argos", list(range(1, 11)), {
        "on_spot": (0.02, "fraction of the 50 robots on the black spot, mean over the last 60 s"),
        "stopped": (0.02, "fraction of robots that moved less than 1 cm in the last second"),
        "nn_distance": (0.01, "mean distance to the nearest robot at the end, m"),
        "largest_cluster": (0.02, "largest group (robots within 0.3 m, linked) at the end, fraction of robots"),
        "clusters": (0.5, "groups of 3 or more robots at the end"),
    }),
    "obstacle_avoidance": ("obstacle_avoidance.argos", list(range(1, 21)), {
        "speed": (0.002, "mean speed over the run (1-s samples), m/s"),
        "stuck": (0.02, "fraction of 1-s intervals in which a robot moved less than 1 cm"),
        "coverage": (0.02, "fraction of the 0.25 m cells of the arena visited"),
        "displacement": (0.05, "distance from start to end, m"),
    }),
    "phototaxis": ("phototaxis.argos", list(range(1, 21)), {
        "reached": (0.05, "fraction of runs in which the robot came within 0.5 m of the light"),
        "time_to_light": (1.0, "seconds until within 0.5 m of the light (the run's length when never)"),
        "final_distance": (0.02, "mean distance to the light over the last 30 s, m"),
    }),
}

# Statistics fleetsim is known to get differently (measured, understood, listed in docs/argos.md).
KNOWN_DIFFERENCES = set()

POS = re.compile(r"POS (\S+) (\d+) (\S+) (\S+)(?: (\S+))?")


def parse(text):
    """{robot id: [(tick, x, y, extra or None), ...]} from the POS lines of a run's output."""
    robots = {}
    for line in text.splitlines():
        m = POS.search(line)
        if m:
            extra = float(m.group(5)) if m.group(5) else None
            robots.setdefault(m.group(1), []).append(
                (int(m.group(2)), float(m.group(3)), float(m.group(4)), extra))
    for v in robots.values():
        v.sort()
    return robots


def clusters_of(points, link):
    """Groups of points linked by distances <= link (single linkage)."""
    n = len(points)
    parent = list(range(n))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(n):
        for j in range(i + 1, n):
            if math.dist(points[i], points[j]) <= link:
                parent[find(i)] = find(j)
    sizes = {}
    for i in range(n):
        sizes[find(i)] = sizes.get(find(i), 0) + 1
    return sorted(sizes.values(), reverse=True)


def stats(case, robots, length_s):
    if not robots:
        raise ValueError("no POS lines")
    if case == "aggregation_spot":
        last = max(s[-1][0] for s in robots.values())
        window = [t for t in range(last - 590, last + 1, 10)]
        on = [sum(1 for s in robots.values() for (t, _, _, g) in s if t == w and g < 0.5) / len(robots)
              for w in window]
        end = [(s[-1][1], s[-1][2]) for s in robots.values()]
        moved = [math.dist(s[-1][1:3], s[-2][1:3]) for s in robots.values()]
        nn = [min(math.dist(p, q) for j, q in enumerate(end) if j != i) for i, p in enumerate(end)]
        groups = clusters_of(end, 0.3)
        return {"on_spot": sum(on) / len(on),
                "stopped": sum(1 for d in moved if d < 0.01) / len(moved),
                "nn_distance": sum(nn) / len(nn),
                "largest_cluster": groups[0] / len(end),
                "clusters": sum(1 for g in groups if g >= 3)}
    if case == "obstacle_avoidance":
        speed, stuck, disp, cells = [], [], [], set()
        for s in robots.values():
            steps = [math.dist(a[1:3], b[1:3]) for a, b in zip(s, s[1:])]
            speed.append(sum(steps) / (len(steps) or 1))
            stuck.append(sum(1 for d in steps if d < 0.01) / (len(steps) or 1))
            disp.append(math.dist(s[0][1:3], s[-1][1:3]))
            for _, x, y, _ in s:
                cells.add((math.floor((x + 2) / 0.25), math.floor((y + 2) / 0.25)))
        return {"speed": sum(speed) / len(speed), "stuck": sum(stuck) / len(stuck),
                "coverage": len(cells) / 256.0, "displacement": sum(disp) / len(disp)}
    if case == "phototaxis":
        (s,) = robots.values()
        reach = next((t / 10.0 for t, x, y, _ in s if math.hypot(x, y) < 0.5), None)
        tail = [math.hypot(x, y) for t, x, y, _ in s if t >= s[-1][0] - 290]
        return {"reached": 1.0 if reach is not None else 0.0,
                "time_to_light": reach if reach is not None else length_s,
                "final_distance": sum(tail) / len(tail)}
    raise ValueError(case)


def summary(per_seed):
    out = {}
    for key in per_seed[0]:
        v = [r[key] for r in per_seed]
        mean = sum(v) / len(v)
        sd = math.sqrt(sum((x - mean) ** 2 for x in v) / (len(v) - 1)) if len(v) > 1 else 0.0
        out[key] = {"mean": mean, "sd": sd, "n": len(v)}
    return out


def length_of(path):
    m = re.search(r'<experiment[^>]*length="([0-9.]+)"', open(path).read())
    return float(m.group(1))


def with_seed(path, seed, directory):
    """A copy of the case's .argos file with random_seed=seed (ARGoS has no seed option)."""
    text = re.sub(r'random_seed="\d+"', 'random_seed="%d"' % seed, open(path).read())
    out = os.path.join(directory, "seed%d_%s" % (seed, os.path.basename(path)))
    with open(out, "w") as f:
        f.write(text)
    return out


def run_argos(a):
    figures = json.load(open(FIGURES)) if os.path.exists(FIGURES) else {"cases": {}}
    for case in a.cases:
        file, seeds, _ = CASES[case]
        folder = os.path.join(HERE, case)
        path = os.path.join(folder, file)
        per_seed = []
        with tempfile.TemporaryDirectory() as tmp:
            for seed in seeds:
                copy = with_seed(path, seed, tmp)
                out = subprocess.run([a.argos3, "-z", "-c", copy], cwd=folder, capture_output=True,
                                     text=True, check=True)
                per_seed.append(stats(case, parse(out.stdout), length_of(path)))
                print(case, seed, json.dumps(per_seed[-1]), file=sys.stderr)
        figures["cases"][case] = {
            "file": os.path.relpath(path, HERE), "seeds": seeds,
            "command": "cd tests/data/argos-behaviour/%s && argos3 -z -c <%s with random_seed=SEED>" % (case, file),
            "per_seed": per_seed, "summary": summary(per_seed)}
    figures["argos_commit"] = a.commit
    figures["produced_by"] = "tests/data/argos-behaviour/behaviour.py argos --argos3 ARGOS3 --commit COMMIT"
    with open(FIGURES, "w") as f:
        json.dump(figures, f, indent=1, sort_keys=True)
        f.write("\n")
    return 0


def run_compare(a):
    figures = json.load(open(FIGURES))
    failed, report = [], []
    for case in a.cases:
        file, seeds, keys = CASES[case]
        argos = figures["cases"][case]
        if argos["seeds"] != seeds:
            raise SystemExit("%s: ARGoS's figures are for seeds %s" % (case, argos["seeds"]))
        folder = os.path.join(HERE, case)
        path = os.path.join(folder, file)
        per_seed = []
        for seed in seeds:
            out = subprocess.run([a.fleetsim, "run", file, "--seed", str(seed), "--log", "", "--quiet"],
                                 cwd=folder, capture_output=True, text=True)
            if out.returncode != 0:
                raise SystemExit("%s seed %d: fleetsim failed:\n%s" % (case, seed, out.stderr))
            per_seed.append(stats(case, parse(out.stdout), length_of(path)))
        ours = summary(per_seed)
        for key, (floor, what) in keys.items():
            ref = argos["summary"][key]
            tol = max(3 * math.sqrt((ref["sd"] ** 2 + ours[key]["sd"] ** 2) / ref["n"]), floor)
            diff = ours[key]["mean"] - ref["mean"]
            ok = abs(diff) <= tol
            known = "%s.%s" % (case, key) in KNOWN_DIFFERENCES
            line = "%-8s %s.%s: fleetsim %.4f (sd %.4f), ARGoS %.4f (sd %.4f), difference %+.4f, tolerance %.4f -- %s" % (
                "ok" if ok else ("KNOWN" if known else "DIFFERS"), case, key, ours[key]["mean"], ours[key]["sd"],
                ref["mean"], ref["sd"], diff, tol, what)
            report.append(line)
            if not ok and not known:
                failed.append(line)
    print("\n".join(report))
    if a.json:
        print(json.dumps({"report": report, "failed": len(failed)}))
    return 1 if failed else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="what", required=True)
    pa = sub.add_parser("argos")
    pa.add_argument("--argos3", required=True)
    pa.add_argument("--commit", required=True)
    pc = sub.add_parser("compare")
    pc.add_argument("--fleetsim", required=True)
    pc.add_argument("--json", action="store_true")
    for q in (pa, pc):
        q.add_argument("--cases", default=",".join(CASES))
    a = p.parse_args()
    a.cases = a.cases.split(",")
    if a.what == "compare":
        a.fleetsim = os.path.abspath(a.fleetsim)
        return run_compare(a)
    return run_argos(a)


if __name__ == "__main__":
    sys.exit(main())
