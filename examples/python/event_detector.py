#!/usr/bin/python3
"""An event-driven detector as a federate in Python (docs/federate-api.md, "Event and
observation flows"; docs/python.md): it plays the `detector` node of event_detector.xml. At
each tick it reads the sink's latest level (an observation flow) and, depending on both,
raises an alarm at the tick's own timestamp (the alarm flow has lookahead 0: a reaction) and
sometimes another 2 ms later. The run repeats bit for bit on every transport.

    PYTHONPATH=build/python build/fleetsim launch examples/python/event_detector.xml

`fleetsim launch` starts it as: event_detector.py FEDERATION --name detector [options].
"""
import hashlib
import struct
import sys

import fleetsim

MS = 1_000_000


def main():
    alarms = 0
    with fleetsim.Federate.from_command_line(sys.argv) as fed:
        def on_tick(tick):
            nonlocal alarms
            level = fed.observe("level")  # the latest level stamped <= the tick, or None
            seen = tick.payload + (level.payload if level else b"")
            h = int.from_bytes(hashlib.sha256(seen).digest()[:8], "little")
            if h % 3:
                fed.send_event("alarm", tick.timestamp, struct.pack("<Q", h))
                alarms += 1
            if h % 2 == 0 and tick.timestamp + 2 * MS < fed.until:
                fed.send_event("alarm", tick.timestamp + 2 * MS, struct.pack("<Q", ~h & (2**64 - 1)))
                alarms += 1

        fed.set_message_handler(on_tick)
        # Event-driven: each request is granted at the next tick. Asking for the end time also
        # tells the null messages how far ahead to announce (to the next tick).
        while not fed.next_event_request(fed.until).done:
            pass
    print(f"detector: {alarms} alarms", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
