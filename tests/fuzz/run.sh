#!/usr/bin/env bash
# Runs the fuzzers one after another, each for SECONDS, on a copy of its corpus in BUILD/fuzz/
# (the repository is never written). Prints one line per harness; exits 1 if any of them
# found a crash, a leak, a sanitizer report or a timeout, naming the reproducer.
# Usage: tests/fuzz/run.sh BUILD SECONDS [HARNESS...]   (`make fuzz` calls it)
# FUZZ_SEED=N (N > 0) fixes libFuzzer's random seed, so that a run from the same corpus makes
# the same mutations (CI's gate: a failure there replays here); unset or 0, a random seed.
set -euo pipefail

if (( $# < 2 )); then sed -n '2,5p' "$0"; exit 2; fi
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="$(cd "$1" && pwd)"
seconds="$2"
shift 2
harnesses=(experiment federation view_config png_bitmap frame_log frame_log_packed deeco_log wire swarm domains checkpoint run)
if (( $# > 0 )); then harnesses=("$@"); fi

work="$build/fuzz"
mkdir -p "$work/logs"
# Generated seeds: logs written by short runs of the examples, wire messages.
rm -rf "$work/generated"
"$build/fuzz_make_seeds" "$root" "$work/generated" >"$work/logs/make_seeds.log" 2>&1 || {
  echo "fuzz: the seed generator failed; see $work/logs/make_seeds.log" >&2
  exit 1
}

# Sets cpu_now to the CPU seconds of the finished child processes so far (bash's `times`).
children_cpu() {
  times >"$work/logs/times.txt"
  cpu_now=$(awk 'NR == 2 { t = 0; for (i = 1; i <= 2; ++i) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] }
                           printf "%d", t }' "$work/logs/times.txt")
}

failed=()
for h in "${harnesses[@]}"; do
  corpus="$work/corpus/$h"
  artifacts="$work/artifacts/$h"
  log="$work/logs/$h.log"
  mkdir -p "$corpus" "$artifacts"
  # The corpus grows from run to run; the seeds and past crashes are added back each time.
  for seeds in "$root/tests/fuzz/corpus/$h" "$work/generated/$h" "$root/tests/fuzz/regressions/$h"; do
    if [[ -d $seeds ]] && compgen -G "$seeds/*" >/dev/null; then cp -n "$seeds"/* "$corpus"/; fi
  done
  options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
           -artifact_prefix="$artifacts/")
  if [[ ${FUZZ_SEED:-0} != 0 ]]; then options+=(-seed="$FUZZ_SEED"); fi
  if [[ -f $root/tests/fuzz/dicts/$h.dict ]]; then options+=(-dict="$root/tests/fuzz/dicts/$h.dict"); fi
  before=$(date +%s)
  children_cpu
  cpu_before=$cpu_now
  status=0
  "$build/fuzz_$h" "${options[@]}" "$corpus" >"$log" 2>&1 || status=$?
  elapsed=$(( $(date +%s) - before ))
  children_cpu
  cpu=$(( cpu_now - cpu_before ))
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  if (( status == 0 )); then
    printf 'fuzz: %-17s ok      %4d s (%d s CPU), %s runs, corpus %d files\n' "$h" "$elapsed" \
      "$cpu" "${runs:-?}" "$(find "$corpus" -type f | wc -l)"
  else
    reproducer=$(ls -t "$artifacts" 2>/dev/null | head -1)
    printf 'fuzz: %-17s FAILED  after %d s (status %d)\n' "$h" "$elapsed" "$status"
    if [[ -n $reproducer ]]; then
      echo "  reproducer: $artifacts/$reproducer"
      echo "  replay:     $build/fuzz_$h $artifacts/$reproducer"
    fi
    echo "  log:        $log"
    grep -m1 -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|fuzz:|ALARM|.*deadly signal)' "$log" |
      sed 's/^/  /' || true
    failed+=("$h")
  fi
done

if (( ${#failed[@]} > 0 )); then
  echo "fuzz: ${#failed[@]} harness(es) failed: ${failed[*]}" >&2
  exit 1
fi
