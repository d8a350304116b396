#!/usr/bin/env python3
"""Writes the rooms bitmap of examples/diffusion (black = wall), with the standard library only.

Usage: scripts/make-room-bitmap.py OUT.png [PIXELS]   (default 400 px = 40 m at 0.1 m/px)
The arena is divided by a cross of walls into four rooms, each split again by a wall; every
wall has doorways so robots can diffuse through the whole arena (after the ARGoS report's
figure 4)."""
import struct
import sys
import zlib


def rooms(n):
    black = [[0] * n for _ in range(n)]
    t = max(1, n // 200)  # wall thickness in pixels

    def hwall(y, x0, x1):
        for yy in range(y, y + t):
            for x in range(x0, x1):
                black[yy][x] = 1

    def vwall(x, y0, y1):
        for y in range(y0, y1):
            for xx in range(x, x + t):
                black[y][xx] = 1

    h = n // 2
    door = n // 20
    # The cross, with a door in each arm.
    hwall(h, 0, n // 4 - door // 2)
    hwall(h, n // 4 + door // 2, 3 * n // 4 - door // 2)
    hwall(h, 3 * n // 4 + door // 2, n)
    vwall(h, 0, n // 4 - door // 2)
    vwall(h, n // 4 + door // 2, 3 * n // 4 - door // 2)
    vwall(h, 3 * n // 4 + door // 2, n)
    # One more wall in each quadrant, with a door in its middle.
    q = n // 4
    for (x0, y0) in [(0, 0), (h, 0), (0, h), (h, h)]:
        vwall(x0 + q, y0 + n // 16, y0 + q - door // 2)
        vwall(x0 + q, y0 + q + door // 2, y0 + h - n // 16)
    return black


def write_png(path, rows):
    h, w = len(rows), len(rows[0])
    raw = b"".join(b"\x00" + bytes(0 if v else 255 for v in row) for row in rows)

    def chunk(kind, data):
        c = struct.pack(">I", len(data)) + kind + data
        return c + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    png = b"\x89PNG\r\n\x1a\n"
    png += chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))  # 8-bit grey
    png += chunk(b"IDAT", zlib.compress(raw, 9))
    png += chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(png)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 400
    write_png(sys.argv[1], rooms(n))
