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
import sys

import fleetsim

SPEED = 0.1   # m/s, cruising wheel speed
GAIN = 0.25   # m/s of wheel speed difference per unit of lateral proximity


class Pilot:
    def __init__(self):
        self.wheels, self.colour = (SPEED, SPEED), (0, 255, 0, 255)
        self.seen = self.near = self.touching = 0

    def see(self, message):
        """Braitenberg avoidance on the front rays; a turn on the spot when blocked ahead."""
        readings = fleetsim.swarm.decode_readings(message.payload)
        if readings.tick < 0:             # no tick simulated yet
            return
        rays = readings.sensors["proximity"]  # 8 rays: 0 (nothing within 0.1 m) to 1 (touching)
        values, angles = rays.values, rays.angles  # angles: rad CCW from the heading
        self.seen += 1
        self.touching += len(readings.sensors["collision"].angles) > 0  # one angle per contact
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
        """Wheel speeds (m/s) and the LED's r, g, b, a: what the e-puck's actuators take."""
        return fleetsim.swarm.encode_commands({"differential_drive": self.wheels,
                                               "leds": bytes(self.colour)})


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
