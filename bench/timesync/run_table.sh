#!/bin/bash
# Produces the rows of docs/benchmarks.md, "Time synchronisation": 3 runs of every
# (topology, K, mode) on ZeroMQ over TCP loopback, one JSON line each.
# Usage: bench/timesync/run_table.sh [BUILD_DIR] > results.jsonl
build=${1:-build}
for topology in all-to-all ring; do
  for k in 2 4 8; do
    for mode in dsaam lockstep; do
      steps=10000
      [ "$k" -eq 8 ] && steps=3000
      for run in 1 2 3; do
        "$build/bench/timesync" --nodes "$k" --mode "$mode" --transport zmq \
          --topology "$topology" --steps "$steps" --payload 0
      done
    done
  done
done
