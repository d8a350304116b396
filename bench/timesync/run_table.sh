#!/bin/bash
# Produces the rows of docs/benchmarks.md, "Time synchronisation": 3 runs of every
# (topology, K, mode), one JSON line each.
# Usage: bench/timesync/run_table.sh [BUILD_DIR] [TRANSPORT] [PAYLOAD] > results.jsonl
#   TRANSPORT: zmq (TCP loopback, the default), shm or inproc; PAYLOAD: bytes per message (0).
build=${1:-build}
transport=${2:-zmq}
payload=${3:-0}
for topology in all-to-all ring; do
  for k in 2 4 8; do
    for mode in dsaam lockstep; do
      steps=10000
      [ "$transport" = shm ] && steps=20000
      [ "$k" -eq 8 ] && steps=$((steps * 3 / 10))
      [ "$k" -eq 8 ] && [ "$transport" = shm ] && steps=5000
      for run in 1 2 3; do
        "$build/bench/timesync" --nodes "$k" --mode "$mode" --transport "$transport" \
          --topology "$topology" --steps "$steps" --payload "$payload"
      done
    done
  done
done
