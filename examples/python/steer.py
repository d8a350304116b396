"""Steers one e-puck to a goal across the arena from Python, reading its pose from the run's
columns and writing its wheel speeds, one tick at a time (docs/python.md).

    PYTHONPATH=build/python python3 examples/python/steer.py [--goal X,Y] [--log FILE]
"""
import argparse
import math
import os

import fleetsim


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--goal", default="2.5,2.5", help="where to drive, metres (default 2.5,2.5)")
    parser.add_argument("--log", default="steer.flog", help="the frame log ('' for none)")
    args = parser.parse_args()
    gx, gy = (float(v) for v in args.goal.split(","))
    here = os.path.dirname(os.path.abspath(__file__))
    with fleetsim.Simulation(os.path.join(here, "steer.xml"), log=args.log) as sim:
        me = sim.robot_names().index("steered")
        x, y, theta = sim.column("x"), sim.column("y"), sim.column("theta")
        wheels = sim.column("differential_drive")  # left, right, m/s; writable
        prox = sim.column("proximity")             # 8 rays, 0 (nothing) .. 1 (touching)
        while not sim.done:
            dx, dy = gx - x[me], gy - y[me]
            if math.hypot(dx, dy) < 0.05:
                print(f"reached ({gx}, {gy}) at t = {sim.time:.1f} s")
                return 0
            # Turn toward the goal, slow down to turn, and veer away from what the front rays see.
            err = math.atan2(dy, dx) - theta[me]
            err = math.atan2(math.sin(err), math.cos(err))
            avoid = 0.5 * (prox[me][0] + prox[me][1] - prox[me][6] - prox[me][7])
            forward = 0.12 * max(0.0, math.cos(err)) * (1 - min(1.0, prox[me].max()))
            turn = 0.1 * max(-1.0, min(1.0, 2 * err - avoid))
            wheels[me] = (forward - turn, forward + turn)
            sim.step()
        print(f"did not reach ({gx}, {gy}) in {sim.time:.0f} s: at ({x[me]:.2f}, {y[me]:.2f})")
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
