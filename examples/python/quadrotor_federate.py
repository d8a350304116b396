#!/usr/bin/python3
"""An external quadrotor flight model flying a robot inside a fleetsim swarm run, through the
federate API (docs/federate-api.md, docs/python.md): MORSE's external flight model, in Python.

It plays the `flight` node of quadrotor-federation.xml. Every 100 ms it receives the pose of
every robot of the swarm; it steers a quadrotor toward a point 1.5 m above the centre of the
ground robots. The quadrotor is a rigid body in 3D: thrust along its body axis, roll and
pitch commanded and tracked with a first-order lag, gravity and linear drag, integrated at
1 kHz. Every 100 ms it sends the quadrotor's pose for the swarm's robot "drone".
"""
import math
import sys

import fleetsim

G = 9.81            # m/s^2
MASS = 0.5          # kg
DRAG = 0.35         # N per m/s
TILT_TAU = 0.08     # s: how fast roll and pitch follow their commands
MAX_TILT = 0.35     # rad
STEP = 1_000_000    # ns: the flight model's integration step
ALTITUDE = 1.5      # m above the ground robots' centre


class Quadrotor:
    def __init__(self, x, y):
        self.p = [x, y, 0.0]         # position, m
        self.v = [0.0, 0.0, 0.0]     # velocity, m/s
        self.roll = self.pitch = 0.0
        self.yaw = 0.0
        self.target = [x, y, ALTITUDE]
        self.t = 0                   # ns

    def control(self):
        """A cascaded PD controller: position error -> desired acceleration -> tilt, thrust."""
        ax = 1.2 * (self.target[0] - self.p[0]) - 1.6 * self.v[0]
        ay = 1.2 * (self.target[1] - self.p[1]) - 1.6 * self.v[1]
        az = 2.0 * (self.target[2] - self.p[2]) - 2.2 * self.v[2]
        pitch = max(-MAX_TILT, min(MAX_TILT, ax / G))
        roll = max(-MAX_TILT, min(MAX_TILT, -ay / G))
        thrust = MASS * (G + az) / (math.cos(self.roll) * math.cos(self.pitch))
        return roll, pitch, max(0.0, min(2.5 * MASS * G, thrust))

    def fly_to(self, t):
        """Integrates (semi-implicit Euler, 1 kHz) up to time t (ns)."""
        while self.t < t:
            dt = min(STEP, t - self.t) * 1e-9
            roll_cmd, pitch_cmd, thrust = self.control()
            self.roll += (roll_cmd - self.roll) * dt / TILT_TAU
            self.pitch += (pitch_cmd - self.pitch) * dt / TILT_TAU
            # Thrust along the body's z axis (yaw 0), in the world frame.
            fx = thrust * math.sin(self.pitch) * math.cos(self.roll)
            fy = -thrust * math.sin(self.roll)
            fz = thrust * math.cos(self.pitch) * math.cos(self.roll) - MASS * G
            for k, f in enumerate((fx, fy, fz)):
                self.v[k] += (f - DRAG * self.v[k]) / MASS * dt
                self.p[k] += self.v[k] * dt
            if self.p[2] < 0.0:      # the ground
                self.p[2], self.v[2] = 0.0, max(0.0, self.v[2])
            self.t += round(dt * 1e9)
        return self.p

    def see(self, message):
        """Aims above the centre of the ground robots (every robot but the drone)."""
        ground = [(p.x, p.y) for name, p in fleetsim.swarm.decode_poses(message.payload).items()
                  if name != "drone"]
        if ground:
            self.target = [sum(x for x, _ in ground) / len(ground),
                           sum(y for _, y in ground) / len(ground), ALTITUDE]


def main():
    quad = Quadrotor(-3.0, -3.0)
    with fleetsim.Federate.from_command_line(sys.argv) as fed:
        fed.set_message_handler(quad.see)
        fed.set_emitter("pose", lambda t: fleetsim.swarm.encode_poses(
            {"drone": (*quad.fly_to(t)[:3], quad.yaw)}))
        t = 0
        while not fed.time_advance_request(t).done:
            if t % 5_000_000_000 == 0:
                x, y, z = quad.p
                print(f"flight: t = {t // 1_000_000_000:2d} s, drone at ({x:.2f}, {y:.2f}, "
                      f"{z:.2f}), target ({quad.target[0]:.2f}, {quad.target[1]:.2f})",
                      file=sys.stderr)
            t += 100_000_000
    return 0


if __name__ == "__main__":
    sys.exit(main())
