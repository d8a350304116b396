#!/usr/bin/python3
"""A robot's controller in another program: an e-puck of a fleetsim swarm run, steered from
Python through the federate API (docs/federate-api.md, docs/python.md).

It plays the `pilot` node of rover-federation.xml. Every 100 ms the swarm node sends the
readings of the robot "rover" (its output names the robot); the pilot reads the proximity rays
and steers away from walls and robots, and sends wheel speeds and an LED colour 50 ms later
(the swarm's input that names the robot takes its actuator commands). The swarm's own physics
moves the rover, contacts included.
"""
import math
import struct
import sys

import fleetsim

SPEED = 0.1   # m/s, cruising wheel speed
GAIN = 0.25   # m/s of wheel speed difference per unit of lateral proximity


class Reader:
    """Little-endian fields of a message, in order."""

    def __init__(self, payload):
        self.payload, self.at = payload, 0

    def take(self, fmt):
        values = struct.unpack_from("<" + fmt, self.payload, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values

    def str(self):
        (n,) = self.take("I")
        self.at += n
        return self.payload[self.at - n:self.at].decode()

    def array(self, fmt):
        (n,) = self.take("I")
        return list(self.take(f"{n}{fmt}"))


def decode_readings(payload):
    """The swarm node's readings message: (tick, {sensor name: (values, angles, scalar)})."""
    r = Reader(payload)
    (tick, n), sensors = r.take("qI"), {}
    for _ in range(n):
        name, _type = r.str(), r.str()
        _enabled, scalar = r.take("Bf")
        values, angles, _reals = r.array("f"), r.array("f"), r.array("d")
        for _ in range(r.take("I")[0]):  # range-and-bearing messages (an e-puck has none)
            _sender, _bearings, _data = r.str(), r.take("fff"), r.array("B")
        _blobs = r.take("4B2f" * r.take("I")[0])  # camera blobs: r, g, b, a, distance, angle
        sensors[name] = (values, angles, scalar)
    return tick, sensors


def encode_command(left, right, colour):
    """A command message: the differential drive's wheel speeds and the LED's colour."""
    out = struct.pack("<I", 2)
    for name, data in (("differential_drive", struct.pack("<dd", left, right)),
                       ("leds", bytes(colour))):
        out += struct.pack("<I", len(name)) + name.encode() + struct.pack("<I", len(data)) + data
    return out


class Pilot:
    def __init__(self):
        self.wheels, self.colour = (SPEED, SPEED), (0, 255, 0, 255)
        self.seen = self.near = self.touching = 0

    def see(self, message):
        """Braitenberg avoidance on the front rays; a turn on the spot when blocked ahead."""
        tick, sensors = decode_readings(message.payload)
        if tick < 0:                      # no tick simulated yet
            return
        values, angles, _ = sensors["proximity"]
        self.seen += 1
        self.touching += len(sensors["collision"][1]) > 0
        lateral = sum(v * math.sin(a) for v, a in zip(values, angles) if math.cos(a) > 0.2)
        ahead = max((v * math.cos(a) for v, a in zip(values, angles) if math.cos(a) > 0.2),
                    default=0.0)
        if ahead > 0.3:                   # blocked: turn on the spot, away from the nearer side
            turn = SPEED if lateral >= 0 else -SPEED
            self.wheels = (turn, -turn)
        else:
            speed = SPEED * (1.0 - ahead)
            self.wheels = (speed + GAIN * lateral, speed - GAIN * lateral)
        avoiding = max(values, default=0.0) > 0.0
        self.near += avoiding
        self.colour = (255, 0, 0, 255) if avoiding else (0, 255, 0, 255)

    def command(self, t):
        return encode_command(*self.wheels, self.colour)


def main():
    pilot = Pilot()
    with fleetsim.Federate.from_command_line(sys.argv) as fed:
        fed.set_emitter("wheels", pilot.command)  # each command when it is due
        fed.run(pilot.see)                         # to the end, each readings message to see()
    print(f"pilot: {pilot.seen} readings, {pilot.near} with an obstacle in sight, "
          f"{pilot.touching} in contact", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
