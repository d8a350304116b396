#!/usr/bin/python3
"""A damped mass on a spring as a federate in Python (docs/federate-api.md, docs/python.md):
it plays the `dynamics` node of spring.xml, takes the controller's force, publishes its
position and velocity every millisecond, and gives the built-in node's traces byte for byte.

    PYTHONPATH=build/python build/fleetsim launch examples/python/spring.xml --transport zmq

`fleetsim launch` starts it as: spring_federate.py FEDERATION --name dynamics [options].
"""
import struct
import sys

import fleetsim

STIFFNESS, DAMPING = 4.0, 0.5  # 1/s^2, 1/s


class Spring:
    def __init__(self):
        self.x = self.v = self.force = 0.0
        self.t = 0  # ns

    def take(self, message):
        if message.input == "force":
            (self.force,) = struct.unpack_from("<d", message.payload)

    def state_at(self, t):
        """Semi-implicit Euler over the exact time since the last message."""
        if t > self.t:
            dt = (t - self.t) * 1e-9
            self.v += (self.force - STIFFNESS * self.x - DAMPING * self.v) * dt
            self.x += self.v * dt
            self.t = t
        return struct.pack("<dd", self.x, self.v)


def main():
    spring = Spring()
    with fleetsim.Federate.from_command_line(sys.argv) as fed:
        fed.set_message_handler(spring.take)   # each force as it arrives, in time order
        fed.set_emitter("state", spring.state_at)  # each state when it is due
        t = 0
        while not fed.time_advance_request(t).done:  # time-stepped, 100 ms a step
            if t % 1_000_000_000 == 0:
                print(f"spring: t = {t // 1_000_000_000} s, x = {spring.x:.6f} m", file=sys.stderr)
            t += 100_000_000
    return 0


if __name__ == "__main__":
    sys.exit(main())
