"""How far a crowd of e-pucks spreads in 20 s, for two speeds and two avoidance angles, three
seeds each: twelve runs over the machine's cores, one table (docs/python.md).

    PYTHONPATH=build/python python3 examples/python/sweep.py [--seeds N] [--workers N]
"""
import argparse
import os

import numpy as np

import fleetsim


def spread(sim):
    """The figures of one run: the robots' mean distance from where the crowd started."""
    x, y = sim.column("x"), sim.column("y")
    return {"mean_distance_m": round(float(np.hypot(x, y).mean()), 4)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3, help="seeds per point (default 3)")
    parser.add_argument("--workers", type=int, default=None, help="processes (default: cores)")
    args = parser.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    rows = fleetsim.sweep(os.path.join(here, "diffusion-sweep.xml"),
                          seeds=range(1, args.seeds + 1),
                          params={"speed": [0.05, 0.1], "alpha": [7.5, 30]},
                          measure=spread, workers=args.workers)
    print(fleetsim.format_table(rows, ["speed", "alpha", "seed", "ok", "mean_distance_m",
                                       "state_hash", "wall_seconds"]))
    failed = [r for r in rows if not r["ok"]]
    for r in failed:
        print(f"seed {r['seed']} speed {r['speed']} alpha {r['alpha']}: {r['error']}")
    # Faster robots spread further: the table's point, checked.
    mean = {v: np.mean([r["mean_distance_m"] for r in rows if r["speed"] == v and r["ok"]])
            for v in (0.05, 0.1)}
    print(f"mean distance: {mean[0.05]:.3f} m at 0.05 m/s, {mean[0.1]:.3f} m at 0.1 m/s")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
