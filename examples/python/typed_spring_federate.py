#!/usr/bin/python3
"""spring_federate.py on typed flows (docs/python.md, "Typed data"): it plays the `dynamics`
node of typed_spring.xml, reads the controller's Push by attribute name and publishes its State
as a dict. The flows' modifiers (down-sampling, noise, a biased camera) act at the sinks, and
the run gives the built-in node's traces of examples/federations/typed_sensors.xml byte for
byte.

    PYTHONPATH=build/python build/fleetsim launch examples/python/typed_spring.xml --transport zmq
"""
import sys

import fleetsim

STIFFNESS, DAMPING = 4.0, 0.5  # 1/s^2, 1/s


def main():
    x = v = force = 0.0
    at = 0  # ns
    with fleetsim.Federate.from_command_line(sys.argv) as fed:
        def take(message):
            nonlocal force
            force = fed.decode(message)["force"]  # the Push, with the flow's modifiers

        def state_at(t):
            nonlocal x, v, at
            if t > at:  # semi-implicit Euler over the exact time since the last message
                dt = (t - at) * 1e-9
                v += (force - STIFFNESS * x - DAMPING * v) * dt
                x += v * dt
                at = t
            return {"x": x, "v": v}  # a State, encoded by the federate

        fed.set_message_handler(take)
        fed.set_emitter("state", state_at)
        t = 0
        while not fed.time_advance_request(t).done:
            t += 100_000_000
        print(f"typed spring: x = {x:.6f} m at the end", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
