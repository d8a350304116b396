"""The messages of a swarm node's flows, for a federate in Python (docs/federation-format.md,
"Swarm nodes"; C++: src/distributed/swarm_node.hpp): robots' poses, an external robot's sensor
readings, and its actuator commands. Little-endian, no padding; a string is a u32 length and
its UTF-8 bytes. A malformed message raises ValueError.

    readings = fleetsim.swarm.decode_readings(message.payload)
    rays = readings.sensors["proximity"].values
    fed.update("wheels", fleetsim.swarm.encode_commands({"differential_drive": (0.1, 0.1)}))
"""
import math
import struct
from collections import namedtuple

Pose = namedtuple("Pose", "x y z theta")
Readings = namedtuple("Readings", "tick sensors")
Sensor = namedtuple("Sensor", "name type enabled scalar values angles reals messages blobs")
RabMessage = namedtuple("RabMessage", "sender range horizontal_bearing vertical_bearing data")
Blob = namedtuple("Blob", "color distance angle")


class _Reader:
    """Reads a message's fields in order; refuses one that ends early or goes on after."""

    def __init__(self, payload, what):
        self.payload, self.at, self.what = bytes(payload), 0, what

    def take(self, fmt):
        try:
            values = struct.unpack_from("<" + fmt, self.payload, self.at)
        except struct.error as e:
            raise ValueError(f"a malformed {self.what}: {e}") from None
        self.at += struct.calcsize("<" + fmt)
        return values

    def one(self, fmt):
        return self.take(fmt)[0]

    def raw(self):
        n = self.one("I")
        if n > len(self.payload) - self.at:
            raise ValueError(f"a malformed {self.what}: a length larger than its bytes")
        self.at += n
        return self.payload[self.at - n:self.at]

    def str(self):
        return self.raw().decode()

    def array(self, fmt):
        return list(self.take(f"{self.one('I')}{fmt}"))

    def end(self):
        if self.at != len(self.payload):
            raise ValueError(f"a malformed {self.what}: trailing bytes after its entries")


def _str(text):
    raw = text.encode()
    return struct.pack("<I", len(raw)) + raw


def encode_poses(poses):
    """{robot id: (x, y, z, theta)} -> a pose message."""
    return struct.pack("<I", len(poses)) + b"".join(
        _str(name) + struct.pack("<4d", *pose) for name, pose in poses.items())


def decode_poses(payload):
    """A pose message -> {robot id: Pose(x, y, z, theta)}, in the message's order."""
    r = _Reader(payload, "pose message")
    poses = {}
    for _ in range(r.one("I")):
        name = r.str()
        poses[name] = Pose(*r.take("4d"))
    r.end()
    return poses


def decode_readings(payload):
    """A readings message -> Readings(tick, {sensor name: Sensor}), sensors in the kind's
    order. tick is -1 (and there are no sensors) before the first tick."""
    r = _Reader(payload, "readings message")
    tick, sensors = r.one("q"), {}
    for _ in range(r.one("I")):
        name, type_ = r.str(), r.str()
        enabled, scalar = r.take("Bf")
        values, angles, reals = r.array("f"), r.array("f"), r.array("d")
        messages = []
        for _ in range(r.one("I")):
            sender = r.str()
            messages.append(RabMessage(sender, *r.take("3f"), r.raw()))
        blobs = []
        for _ in range(r.one("I")):
            red, green, blue, alpha, distance, angle = r.take("4B2f")
            blobs.append(Blob((red, green, blue, alpha), distance, angle))
        sensors[name] = Sensor(name, type_, enabled != 0, scalar, values, angles, reals,
                               messages, blobs)
    r.end()
    return Readings(tick, sensors)


def encode_commands(commands):
    """{actuator name: command} -> a command message. A command is the bytes the actuator
    takes (its f64 values, then its colours' r, g, b, a bytes, then its data bytes), or a
    sequence of numbers for an actuator that takes f64 values only (differential_drive: left
    and right wheel speeds, m/s; quadrotor_speed: vx, vy, vz, m/s, and yaw rate, rad/s). A
    number that is not finite (NaN, infinity) raises ValueError naming the actuator."""
    out = struct.pack("<I", len(commands))
    for name, command in commands.items():
        if not isinstance(command, (bytes, bytearray)):
            command = [float(v) for v in command]
            bad = [v for v in command if not math.isfinite(v)]
            if bad:
                raise ValueError(f"command '{name}': {bad[0]} is not a finite number (commands "
                                 "must be finite numbers)")
        data = command if isinstance(command, (bytes, bytearray)) else \
            struct.pack(f"<{len(command)}d", *command)
        out += _str(name) + struct.pack("<I", len(data)) + bytes(data)
    return out
